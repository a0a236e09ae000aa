import { Hono } from "hono";
import type { AppEnv } from "../../http/context";
import { notFound } from "../../http/errors";
import { PASSKEY_SCRIPT_PATH } from "./assets";
import { Csrf, DateTime, EmptyState } from "./components";
import { setFlash } from "./flash";
import type { Viewer } from "./layout";
import { removePasskey, type PasskeyView } from "../actions/passkeys";

/**
 * Passkeys on the profile page. Adding one needs the browser's WebAuthn, so that form is shown by
 * the passkey script (passkeys.js) only where the browser has it; listing and removing work
 * without any script.
 */
export function PasskeysSection(props: { viewer: Viewer; passkeys: PasskeyView[] }) {
  return (
    <section class="card" aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading">Passkeys</h2>
      <p>
        A passkey signs you in with your device's screen lock or a security key instead of your password. It stays on
        your device; this console keeps only its public key.
      </p>
      <form id="passkey-add" class="inline-form" data-csrf={props.viewer.csrfToken} hidden novalidate>
        <div class="field">
          <label for="f-passkey-name">Passkey name</label>
          <input id="f-passkey-name" name="name" type="text" maxlength={100} required aria-describedby="f-passkey-name-hint" />
          <p class="hint" id="f-passkey-name-hint">
            For example the device or security key that holds it.
          </p>
        </div>
        <div class="actions">
          <button type="submit">Add a passkey</button>
        </div>
      </form>
      <p id="passkey-status" role="status" class="hint"></p>
      <noscript>
        <p class="hint">Adding a passkey needs JavaScript; the passkeys you have are listed below.</p>
      </noscript>
      <PasskeyTable passkeys={props.passkeys} viewer={props.viewer} />
      <script src={PASSKEY_SCRIPT_PATH} defer></script>
    </section>
  );
}

function PasskeyTable(props: { passkeys: PasskeyView[]; viewer: Viewer }) {
  if (props.passkeys.length === 0) {
    return <EmptyState title="No passkeys yet">Add one above to sign in without typing your password.</EmptyState>;
  }
  return (
    <div class="table-wrap">
      <table id="passkey-list">
        <caption class="visually-hidden">Your passkeys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.passkeys.map((p) => (
            <tr data-passkey-id={p.id}>
              <td>{p.name}</td>
              <td>
                <DateTime iso={p.created_at} locale={props.viewer.locale} />
              </td>
              <td>
                <DateTime iso={p.last_used_at} locale={props.viewer.locale} />
              </td>
              <td class="actions-cell">
                <form method="post" action={`/console/profile/passkeys/${encodeURIComponent(p.id)}/remove`}>
                  <Csrf token={props.viewer.csrfToken} />
                  <button type="submit" class="secondary small" aria-label={`Remove passkey ${p.name}`}>
                    Remove
                  </button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The sign-in page's passkey button, shown by passkeys.js where the browser has WebAuthn. */
export function PasskeySignInButton(props: { next: string }) {
  return (
    <div id="passkey-signin" data-next={props.next} hidden>
      <p class="hint">Or, without your password:</p>
      <button type="button" class="secondary">
        Sign in with a passkey
      </button>
      <p id="passkey-status" role="status" class="hint"></p>
      <script src={PASSKEY_SCRIPT_PATH} defer></script>
    </div>
  );
}

/** Removing a passkey from the profile page (a form; no script needed). */
export const passkeyPages = new Hono<AppEnv>().post("/passkeys/:id/remove", async (c) => {
  const name = await removePasskey(c, c.req.param("id"));
  if (name === null) throw notFound("No such passkey in your account. It may have been removed already.");
  await setFlash(c, { notice: `Passkey “${name}” removed. It no longer signs you in.` });
  return c.redirect("/console/profile", 303);
});
