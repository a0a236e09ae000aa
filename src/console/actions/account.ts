import type { Context } from "hono";
import { endSession, startSession } from "../../auth/session";
import { CODE_REQUIRED_MESSAGE, type Credentials, SAME_ANSWER_FOR_BAD_LOGIN, type SignIn, WRONG_CODE_MESSAGE, signInAttempt, signUp as createAccount } from "../../auth/sign-in";
import type { AppEnv } from "../../http/context";
import { type Outcome, refuse } from "./outcome";

export { Credentials, SignIn } from "../../auth/sign-in";

/**
 * Signing up, in and out: what the console's JSON routes (api/auth.ts) and its pages
 * (auth-pages.tsx) both do. Signing up or in starts the session once the checks in src/auth passed.
 */

export const EMAIL_TAKEN = "An account with this email already exists. Sign in instead.";

export type SignedIn = Outcome<{ account: { id: string; email: string } }>;

/** Creates the account and signs it in. */
export async function signUp(c: Context<AppEnv>, input: Credentials): Promise<SignedIn> {
  const result = await createAccount(c, input);
  if (!result.ok) {
    return result.refused === "password" ? refuse("INVALID_REQUEST", result.problem, "password") : refuse("CONFLICT", EMAIL_TAKEN, "email");
  }
  await startSession(c, result.accountId);
  return { ok: true, account: { id: result.accountId, email: input.email } };
}

/** Signs in with the password (and the second-step code when the account has one). */
export async function signIn(c: Context<AppEnv>, input: SignIn): Promise<SignedIn> {
  const result = await signInAttempt(c, input);
  if (!result.ok) {
    if (result.refused === "credentials") return refuse("UNAUTHORIZED", SAME_ANSWER_FOR_BAD_LOGIN, "password");
    if (result.refused === "code_missing") return refuse("TOTP_REQUIRED", CODE_REQUIRED_MESSAGE, "code");
    return refuse("UNAUTHORIZED", WRONG_CODE_MESSAGE, "code");
  }
  await startSession(c, result.accountId);
  return { ok: true, account: { id: result.accountId, email: input.email } };
}

/** Ends this browser's session and clears its cookie. */
export async function signOut(c: Context<AppEnv>): Promise<void> {
  await endSession(c);
}
