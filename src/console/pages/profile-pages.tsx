import { type Context, Hono } from "hono";
import type { AppEnv } from "../../http/context";
import { notFound } from "../../http/errors";
import { listPasskeys, type PasskeyView } from "../actions/passkeys";
import { securityOverview } from "../actions/security";
import { TokenName, createToken, findToken, listTokens, revokeToken, type TokenView } from "../actions/tokens";
import { Csrf, DateTime, EmptyState, Field } from "./components";
import { setFlash, takeFlash, type Flash } from "./flash";
import { readForm, type FieldErrors } from "./forms";
import { Layout, loadViewer, render, type Viewer } from "./layout";
import { PasskeysSection } from "./passkeys-section";
import { securityPages } from "./security-pages";
import { SecuritySections, type SecurityState } from "./security-section";

interface ProfileProps {
  viewer: Viewer;
  tokens: TokenView[];
  passkeys: PasskeyView[];
  security: SecurityState;
  flash?: Flash | null;
  name?: string;
  errors?: FieldErrors;
}

function NewSecret(props: { secret: NonNullable<Flash["secret"]> }) {
  return (
    <div class="secret" id="new-token">
      <p>
        <strong>Token “{props.secret.name}” created.</strong> Copy it now: it will not be shown again. If you lose it,
        revoke it and create a new one.
      </p>
      <label for="new-token-value">Token secret</label>
      <div class="copy-row">
        <input id="new-token-value" type="text" readonly value={props.secret.token} autofocus spellcheck={false} autocomplete="off" />
        <button type="button" class="secondary" data-copy="new-token-value" hidden>
          Copy
        </button>
      </div>
      <p class="hint">
        Scripts send it as <code>Authorization: Bearer &lt;token&gt;</code> to <code>POST /api/v1/dbs/&#123;id&#125;/export</code>.
      </p>
    </div>
  );
}

function TokenTable(props: { tokens: TokenView[]; locale: string }) {
  if (props.tokens.length === 0) {
    return (
      <EmptyState title="No tokens yet">
        Create a token above to let a script start exports of your databases and download them.
      </EmptyState>
    );
  }
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Token</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.tokens.map((t) => (
            <tr data-token-id={t.id}>
              <td>{t.name}</td>
              <td>
                <code title="Only the start of the token is kept in a form that can be shown">{`${t.prefix}••••••••`}</code>
              </td>
              <td>
                <DateTime iso={t.created_at} locale={props.locale} />
              </td>
              <td>
                <DateTime iso={t.last_used_at} locale={props.locale} />
              </td>
              <td class="actions-cell">
                <a class="button secondary small" href={`/console/profile/tokens/${t.id}/revoke`} aria-label={`Revoke ${t.name}`}>
                  Revoke
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ProfilePage(props: ProfileProps) {
  return (
    <Layout title="Profile" viewer={props.viewer} section="profile" flash={props.flash}>
      <h1>Profile</h1>
      <p class="lead">Signed in as {props.viewer.email}.</p>
      <section class="card" aria-labelledby="tokens-heading">
        <h2 id="tokens-heading">API Tokens</h2>
        <p>
          A token lets a script pull backups of your own databases through the public API. It has no other power. The
          secret is shown once, when the token is created.
        </p>
        {props.flash?.secret && <NewSecret secret={props.flash.secret} />}
        <form method="post" action="/console/profile/tokens" class="inline-form" novalidate>
          <Csrf token={props.viewer.csrfToken} />
          <Field name="name" label="Token name" value={props.name} error={props.errors?.name} maxlength={100} hint="For example the machine or job that will use it." required />
          <div class="actions">
            <button type="submit">Create token</button>
          </div>
        </form>
      </section>
      <section class="card" aria-labelledby="list-heading">
        <h2 id="list-heading">Your tokens</h2>
        <TokenTable tokens={props.tokens} locale={props.viewer.locale} />
      </section>
      <PasskeysSection viewer={props.viewer} passkeys={props.passkeys} />
      <SecuritySections viewer={props.viewer} security={props.security} />
      <p>
        <a href="/console/profile/security-log">Security log</a>: every change to your account and its resources, who made it and from where.
      </p>
    </Layout>
  );
}

function RevokePage(props: { viewer: Viewer; token: TokenView }) {
  return (
    <Layout title="Revoke token" viewer={props.viewer} section="profile">
      <div class="card narrow">
        <h1>Revoke “{props.token.name}”?</h1>
        <p>
          Scripts using <code>{`${props.token.prefix}••••••••`}</code> will be refused from the next call on. This cannot be
          undone; create a new token to replace it.
        </p>
        <form method="post" action={`/console/profile/tokens/${props.token.id}/revoke`} class="row-actions">
          <Csrf token={props.viewer.csrfToken} />
          <a class="button secondary" href="/console/profile">
            Cancel
          </a>
          <button type="submit" class="danger" autofocus>
            Revoke token
          </button>
        </form>
      </div>
    </Layout>
  );
}

const NO_SUCH_TOKEN = "No such token in your account. It may have been revoked already.";

/** The profile page with what the account has, and what the form sent back when it was refused. */
async function profilePage(c: Context<AppEnv>, extra: Partial<ProfileProps>, status: 200 | 400 = 200) {
  const [tokens, passkeys, security, viewer] = await Promise.all([listTokens(c), listPasskeys(c), securityOverview(c), loadViewer(c)]);
  return render(c, <ProfilePage viewer={viewer} tokens={tokens} passkeys={passkeys} security={security} {...extra} />, status);
}

/** Profile: the API Tokens section (create, show the secret once, list, revoke). */
export const profilePages = new Hono<AppEnv>()
  .route("/", securityPages)
  .get("/", async (c) => profilePage(c, { flash: await takeFlash(c) }))
  .post("/tokens", async (c) => {
    const form = await readForm(c, TokenName);
    if (!form.ok) return profilePage(c, { name: form.values.name, errors: form.errors }, 400);
    const created = await createToken(c, form.data.name);
    await setFlash(c, { secret: { name: created.name, token: created.token } });
    return c.redirect("/console/profile", 303);
  })
  .get("/tokens/:id/revoke", async (c) => {
    const token = await findToken(c, c.req.param("id"));
    if (!token) throw notFound(NO_SUCH_TOKEN);
    return render(c, <RevokePage viewer={await loadViewer(c)} token={token} />);
  })
  .post("/tokens/:id/revoke", async (c) => {
    const name = await revokeToken(c, c.req.param("id"));
    if (name === null) throw notFound(NO_SUCH_TOKEN);
    await setFlash(c, { notice: `Token “${name}” revoked. Calls with it are refused from now on.` });
    return c.redirect("/console/profile", 303);
  });
