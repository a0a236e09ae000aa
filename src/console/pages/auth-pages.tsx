import { Hono } from "hono";
import { loadSession } from "../../auth/session";
import { Credentials, SignIn, signIn, signOut, signUp } from "../actions/account";
import { refusalFields } from "../actions/outcome";
import type { AppEnv } from "../../http/context";
import { Field } from "./components";
import { AUTH_PAGE_REFERRER_POLICY } from "./secure-headers";
import { setFlash, takeFlash, type Flash } from "./flash";
import { HOME_PATH, safeNext } from "./format";
import { type FieldErrors, readForm } from "./forms";
import { Layout, render } from "./layout";
import { PasskeySignInButton } from "./passkeys-section";

type Mode = "signin" | "signup";

interface AuthFormProps {
  mode: Mode;
  next: string;
  email?: string;
  errors?: FieldErrors;
  flash?: Flash | null;
  /** Sign-in for an account with two-step sign-in: the form asks for a code as well. */
  askCode?: boolean;
}

const TEXT = {
  signin: { title: "Sign in", lead: "Sign in to manage your databases and API tokens.", button: "Sign in" },
  signup: { title: "Create your account", lead: "One account holds your databases, their exports and your API tokens.", button: "Create account" },
} as const;

function AuthForm(props: AuthFormProps) {
  const text = TEXT[props.mode];
  const errors = props.errors ?? {};
  const query = props.next === HOME_PATH ? "" : `?next=${encodeURIComponent(props.next)}`;
  return (
    <Layout title={text.title} flash={props.flash} narrow>
      <div class="card">
        <h1>{text.title}</h1>
        <p class="lead">{text.lead}</p>
        {props.mode === "signin" && props.next !== HOME_PATH && !props.errors && (
          <p class="notice" role="status">
            Sign in to continue to the page you asked for.
          </p>
        )}
        <form method="post" action={`/console/${props.mode}${query}`} novalidate>
          <Field name="email" label="Email" type="email" value={props.email} error={errors.email} autocomplete="username" autofocus={!props.email} required />
          <Field
            name="password"
            label="Password"
            type="password"
            error={errors.password}
            autocomplete={props.mode === "signup" ? "new-password" : "current-password"}
            autofocus={Boolean(props.email) && !errors.email}
            hint={props.mode === "signup" ? "At least 8 characters, and none of the 10,000 most common passwords." : undefined}
            required
          />
          {props.askCode && (
            <Field
              name="code"
              label="Code from your authenticator app"
              error={errors.code}
              autocomplete="one-time-code"
              maxlength={64}
              hint="Six digits, or one of your recovery codes. Enter your password again with it."
              required
            />
          )}
          <button type="submit">{text.button}</button>
        </form>
        {props.mode === "signin" && <PasskeySignInButton next={props.next} />}
      </div>
      <p>
        {props.mode === "signin" ? (
          <>
            No account yet? <a href={`/console/signup${query}`}>Create one</a>.
          </>
        ) : (
          <>
            Already have an account? <a href={`/console/signin${query}`}>Sign in</a>.
          </>
        )}
      </p>
    </Layout>
  );
}

/** Sign up, sign in and sign out as plain HTML forms. */
export const authPages = new Hono<AppEnv>();

for (const path of ["/signin", "/signup"]) {
  authPages.use(path, async function authReferrerPolicy(c, next) {
    await next();
    c.res.headers.set("Referrer-Policy", AUTH_PAGE_REFERRER_POLICY);
  });
}

for (const mode of ["signin", "signup"] as const) {
  authPages.get(`/${mode}`, async (c) => {
    const next = safeNext(c.req.query("next"));
    if (await loadSession(c)) return c.redirect(next, 303);
    return render(c, <AuthForm mode={mode} next={next} flash={await takeFlash(c)} />);
  });
}

authPages.post("/signup", async (c) => {
  const next = safeNext(c.req.query("next"));
  const form = await readForm(c, Credentials);
  if (!form.ok) return render(c, <AuthForm mode="signup" next={next} email={form.values.email} errors={form.errors} />, 400);
  const outcome = await signUp(c, form.data);
  if (!outcome.ok) return render(c, <AuthForm mode="signup" next={next} email={form.values.email} errors={refusalFields(outcome)} />, outcome.code === "CONFLICT" ? 409 : 400);
  return c.redirect(next, 303);
});

authPages.post("/signin", async (c) => {
  const next = safeNext(c.req.query("next"));
  const form = await readForm(c, SignIn);
  const askCode = "code" in form.values;
  if (!form.ok) return render(c, <AuthForm mode="signin" next={next} email={form.values.email} errors={form.errors} askCode={askCode} />, 400);
  const outcome = await signIn(c, { ...form.data, code: form.data.code || undefined });
  if (!outcome.ok) {
    const errors = refusalFields(outcome);
    return render(c, <AuthForm mode="signin" next={next} email={form.values.email} errors={errors} askCode={askCode || "code" in errors} />, 401);
  }
  return c.redirect(next, 303);
});

authPages.post("/signout", async (c) => {
  await signOut(c);
  c.set("accountId", undefined);
  await setFlash(c, { notice: "You have signed out." });
  return c.redirect("/console/signin", 303);
});
