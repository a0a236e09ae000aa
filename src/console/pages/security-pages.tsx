import { Hono } from "hono";
import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import { renderSVG } from "uqr";
import type { AppEnv } from "../../http/context";
import { refusalError, refusalFields } from "../actions/outcome";
import { CodeInput, PasswordChange, changePassword, endOneSession, endOtherSessionsOfAccount, pendingTwoStep, setUpTwoStep, turnOffTwoStep, turnOnTwoStep } from "../actions/security";
import { Csrf, Field } from "./components";
import { setFlash } from "./flash";
import { readForm } from "./forms";
import { Layout, loadViewer, render, type Viewer } from "./layout";
import { PasswordForm, TotpDisableForm } from "./security-section";

/** The QR code of an `otpauth://` URL as inline SVG (uqr), 240 pixels square. */
function QrCode(props: { url: string }) {
  const svg = renderSVG(props.url, { border: 2 }).replace("<svg ", '<svg width="240" height="240" aria-hidden="true" focusable="false" ');
  return (
    <div role="img" aria-label="QR code for your authenticator app">
      {raw(svg)}
    </div>
  );
}

function SetupPage(props: { viewer: Viewer; setup: { secret: string; otpauth_url: string }; error?: string }) {
  return (
    <Layout title="Set up two-step sign-in" viewer={props.viewer} section="profile">
      <div class="card narrow">
        <h1>Set up two-step sign-in</h1>
        <p>Scan this code with your authenticator app, then enter the 6-digit code it shows.</p>
        <QrCode url={props.setup.otpauth_url} />
        <p>
          Cannot scan it? Enter this key in the app instead: <code id="totp-secret">{props.setup.secret}</code>
        </p>
        <form method="post" action="/console/profile/totp/enable" novalidate>
          <Csrf token={props.viewer.csrfToken} />
          <Field name="code" label="Code from the app" error={props.error} autocomplete="one-time-code" maxlength={64} autofocus required />
          <div class="row-actions">
            <a class="button secondary" href="/console/profile">
              Cancel
            </a>
            <button type="submit">Turn on two-step sign-in</button>
          </div>
        </form>
      </div>
    </Layout>
  );
}

function RecoveryCodesPage(props: { viewer: Viewer; codes: string[] }) {
  return (
    <Layout title="Recovery codes" viewer={props.viewer} section="profile">
      <div class="card narrow">
        <h1>Two-step sign-in is on</h1>
        <div class="secret">
          <p>
            <strong>Save these recovery codes now: they are shown only this once.</strong> Each one signs you in once in place
            of a code from your app, if you lose it.
          </p>
          <ul id="recovery-codes" class="mono">
            {props.codes.map((code) => (
              <li>{code}</li>
            ))}
          </ul>
        </div>
        <p>
          <a class="button" href="/console/profile">
            I have saved them
          </a>
        </p>
      </div>
    </Layout>
  );
}

/** A page with one of the profile's forms alone, shown again with what was wrong. */
function FormPage(props: { viewer: Viewer; title: string; children: Child }) {
  return (
    <Layout title={props.title} viewer={props.viewer} section="profile">
      <div class="card narrow">
        <h1>{props.title}</h1>
        {props.children}
        <p>
          <a href="/console/profile">Back to your profile</a>
        </p>
      </div>
    </Layout>
  );
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The profile's sign-in forms (mounted under /console/profile, behind the page session guard). */
export const securityPages = new Hono<AppEnv>()
  .post("/totp/setup", async (c) => {
    const outcome = await setUpTwoStep(c);
    if (!outcome.ok) {
      await setFlash(c, { error: outcome.message });
      return c.redirect("/console/profile", 303);
    }
    return c.redirect("/console/profile/totp/setup", 303);
  })
  .get("/totp/setup", async (c) => {
    const setup = await pendingTwoStep(c);
    if (!setup) return c.redirect("/console/profile", 303);
    return render(c, <SetupPage viewer={await loadViewer(c)} setup={setup} />);
  })
  .post("/totp/enable", async (c) => {
    const form = await readForm(c, CodeInput);
    const outcome = form.ok ? await turnOnTwoStep(c, form.data.code) : undefined;
    if (outcome?.ok) return render(c, <RecoveryCodesPage viewer={await loadViewer(c)} codes={outcome.recoveryCodes} />);
    const setup = await pendingTwoStep(c);
    if (!setup) return c.redirect("/console/profile", 303);
    const error = outcome ? outcome.message : !form.ok ? form.errors.code : undefined;
    return render(c, <SetupPage viewer={await loadViewer(c)} setup={setup} error={error} />, 400);
  })
  .post("/totp/disable", async (c) => {
    const form = await readForm(c, CodeInput);
    const outcome = form.ok ? await turnOffTwoStep(c, form.data.code) : undefined;
    if (outcome?.ok) {
      await setFlash(c, { notice: "Two-step sign-in is off. Signing in needs only your password (or a passkey) now." });
      return c.redirect("/console/profile", 303);
    }
    const error = outcome ? outcome.message : !form.ok ? form.errors.code : undefined;
    const viewer = await loadViewer(c);
    return render(c, <FormPage viewer={viewer} title="Turn off two-step sign-in"><TotpDisableForm viewer={viewer} error={error} /></FormPage>, 400);
  })
  .post("/password", async (c) => {
    const form = await readForm(c, PasswordChange);
    const outcome = form.ok ? await changePassword(c, form.data) : undefined;
    if (outcome?.ok) {
      const ended = outcome.endedSessions;
      const notice = ended === 0 ? "Your password was changed. No other session was signed in." : `Your password was changed, and ${plural(ended, "other session")} signed out.`;
      await setFlash(c, { notice });
      return c.redirect("/console/profile", 303);
    }
    const errors = outcome ? refusalFields(outcome) : !form.ok ? form.errors : {};
    const viewer = await loadViewer(c);
    return render(c, <FormPage viewer={viewer} title="Change password"><PasswordForm viewer={viewer} errors={errors} /></FormPage>, 400);
  })
  .post("/sessions/revoke-others", async (c) => {
    const ended = await endOtherSessionsOfAccount(c);
    await setFlash(c, { notice: ended === 0 ? "No other session was signed in." : `Signed out ${plural(ended, "other session")}.` });
    return c.redirect("/console/profile", 303);
  })
  .post("/sessions/:id/end", async (c) => {
    const id = c.req.param("id");
    // This session is ended by signing out, not from the list.
    if (id === c.get("session")?.id) return c.redirect("/console/profile", 303);
    const outcome = await endOneSession(c, id);
    if (!outcome.ok) throw refusalError(outcome);
    await setFlash(c, { notice: "That session is signed out." });
    return c.redirect("/console/profile", 303);
  });
