import type { SecurityOverview } from "../actions/security";
import type { SessionView } from "../../auth/session-list";
import { Csrf, DateTime, Field } from "./components";
import type { FieldErrors } from "./forms";
import type { Viewer } from "./layout";
import { browserLabel } from "./user-agent";

/**
 * The profile's sign-in parts: two-step sign-in, the password, and the sessions. Plain forms;
 * each posts to /console/profile/... (security-pages.tsx).
 */

export type SecurityState = SecurityOverview;

export function SecuritySections(props: { viewer: Viewer; security: SecurityState }) {
  return (
    <>
      <TwoStepSection viewer={props.viewer} totp={props.security.totp} />
      <PasswordSection viewer={props.viewer} />
      <SessionsSection viewer={props.viewer} sessions={props.security.sessions} />
    </>
  );
}

function TwoStepSection(props: { viewer: Viewer; totp: SecurityState["totp"] }) {
  return (
    <section class="card" aria-labelledby="two-step-heading">
      <h2 id="two-step-heading">Two-step sign-in</h2>
      {props.totp.enabled ? (
        <>
          <p>
            <span class="badge ready">On</span> Signing in with your password also asks for a code from your authenticator
            app. You have {props.totp.recoveryCodesLeft} unused recovery code{props.totp.recoveryCodesLeft === 1 ? "" : "s"}.
          </p>
          <TotpDisableForm viewer={props.viewer} />
        </>
      ) : (
        <>
          <p>
            Ask for a code from an authenticator app (such as 1Password, Google Authenticator or Aegis) after your password,
            so a stolen password alone cannot sign in.
          </p>
          <form method="post" action="/console/profile/totp/setup">
            <Csrf token={props.viewer.csrfToken} />
            <button type="submit">Set up two-step sign-in</button>
          </form>
        </>
      )}
    </section>
  );
}

/** Turning two-step sign-in off: a current code (or a recovery code) is needed. */
export function TotpDisableForm(props: { viewer: Viewer; error?: string }) {
  return (
    <form method="post" action="/console/profile/totp/disable" class="inline-form" novalidate>
      <Csrf token={props.viewer.csrfToken} />
      <Field name="code" label="Code to turn it off" error={props.error} autocomplete="one-time-code" maxlength={64} hint="A code from your authenticator app, or a recovery code." required />
      <div class="actions">
        <button type="submit" class="danger">
          Turn off two-step sign-in
        </button>
      </div>
    </form>
  );
}

/** Changing the password: the current one, and the new one. */
export function PasswordForm(props: { viewer: Viewer; errors?: FieldErrors }) {
  return (
    <form method="post" action="/console/profile/password" novalidate>
      <Csrf token={props.viewer.csrfToken} />
      <Field name="current_password" label="Current password" type="password" error={props.errors?.current_password} autocomplete="current-password" required />
      <Field
        name="new_password"
        label="New password"
        type="password"
        error={props.errors?.new_password}
        autocomplete="new-password"
        hint="At least 8 characters, and none of the 10,000 most common passwords."
        required
      />
      <button type="submit">Change password</button>
    </form>
  );
}

function PasswordSection(props: { viewer: Viewer }) {
  return (
    <section class="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      <p>Changing your password signs out every other session of your account; this one stays signed in.</p>
      <PasswordForm viewer={props.viewer} />
    </section>
  );
}

function SessionsSection(props: { viewer: Viewer; sessions: SessionView[] }) {
  const others = props.sessions.filter((s) => !s.current).length;
  return (
    <section class="card" aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      <p>Where your account is signed in. End any session you do not recognise, then change your password.</p>
      <div class="table-wrap">
        <table id="session-list">
          <caption class="visually-hidden">Your sessions</caption>
          <thead>
            <tr>
              <th scope="col">Browser</th>
              <th scope="col">Address</th>
              <th scope="col">Signed in</th>
              <th scope="col">Last seen</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {props.sessions.map((s) => (
              <SessionRow session={s} viewer={props.viewer} />
            ))}
          </tbody>
        </table>
      </div>
      {others > 0 && (
        <form method="post" action="/console/profile/sessions/revoke-others" class="row-actions">
          <Csrf token={props.viewer.csrfToken} />
          <button type="submit" class="secondary">
            Sign out everywhere else
          </button>
        </form>
      )}
    </section>
  );
}

function SessionRow(props: { session: SessionView; viewer: Viewer }) {
  const s = props.session;
  const browser = browserLabel(s.user_agent);
  return (
    <tr data-session-id={s.id}>
      <td>
        <span title={s.user_agent ?? undefined}>{browser}</span>
      </td>
      <td>
        <code>{s.address ?? "unknown"}</code>
      </td>
      <td>
        <DateTime iso={s.created_at} locale={props.viewer.locale} />
      </td>
      <td>
        <DateTime iso={s.last_seen_at} locale={props.viewer.locale} />
      </td>
      <td class="actions-cell">
        {s.current ? (
          <span class="badge ready">This session</span>
        ) : (
          <form method="post" action={`/console/profile/sessions/${s.id}/end`}>
            <Csrf token={props.viewer.csrfToken} />
            <button type="submit" class="secondary small" aria-label={`Sign out ${browser} at ${s.address ?? "an unknown address"}`}>
              Sign out
            </button>
          </form>
        )}
      </td>
    </tr>
  );
}
