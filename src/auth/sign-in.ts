import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../http/context";
import { ADDRESS_SIGNUPS, checkAllowance, clientAddress, giveBack, signInKeys, spendAllowance, spendFirst } from "../http/auth-limits";
import type { RatePolicy } from "../http/gcra";
import { accountByEmail, accountCredentials, insertAccount, setPasswordHash } from "./accounts";
import { COMMON_PASSWORD_MESSAGE, isCommonPassword } from "./common-passwords";
import { DECOY_PASSWORD_HASH, hashPassword, verifyPassword } from "./password";
import { endOtherSessions } from "./session-list";
import { totpEnabled, useSecondStep } from "./totp-store";

/**
 * Signing up, signing in with a password (and a second-step code when the account has one) and
 * changing the password. The console's account actions (src/console/actions/account.ts) call
 * these, then start the session; a passkey sign-in does its own check, then the same.
 */

export const Password = z
  .string({ message: "Enter a password." })
  .min(8, "Use at least 8 characters for the password.")
  .max(256, "Use at most 256 characters for the password.");

export const Credentials = z.object({
  email: z
    .string({ message: "Enter your email address." })
    .trim()
    .toLowerCase()
    .max(254, "That email address is too long.")
    .pipe(z.email({ message: "Enter a valid email address." })),
  password: Password,
});
export type Credentials = z.output<typeof Credentials>;

/** A sign-in: the credentials and, for an account with two-step sign-in, a code. */
export const SignIn = Credentials.extend({
  code: z.string({ message: "Enter the code as text." }).trim().max(64, "That code is too long.").optional(),
});
export type SignIn = z.output<typeof SignIn>;

export const SAME_ANSWER_FOR_BAD_LOGIN = "The email or password is not right.";
export const CODE_REQUIRED_MESSAGE = "Enter the 6-digit code from your authenticator app, or one of your recovery codes.";
export const WRONG_CODE_MESSAGE = "That code is not right, or it was used already. Enter the newest code from your authenticator app, or an unused recovery code.";

/** The sentence refusing a new password, or null when it may be used. */
export async function newPasswordProblem(password: string): Promise<string | null> {
  return (await isCommonPassword(password)) ? COMMON_PASSWORD_MESSAGE : null;
}

/** Creates an account; false when the email is taken. */
async function createAccount(env: Env, input: Credentials, now: number, id: string): Promise<boolean> {
  const passwordHash = await hashPassword(input.password);
  return insertAccount(env, { id, email: input.email, passwordHash, createdAt: now });
}

/** The account id for these credentials, or null; unknown emails cost as much as wrong passwords. */
async function checkCredentials(env: Env, input: Credentials): Promise<string | null> {
  const row = await accountByEmail(env, input.email);
  const ok = await verifyPassword(input.password, row?.passwordHash ?? DECOY_PASSWORD_HASH);
  return ok && row ? row.id : null;
}

/** Counts a sign-up against the client address (each costs a password hash); 429 past the limit. */
async function limitSignUp(c: Context<AppEnv>): Promise<void> {
  const keys: [string, RatePolicy][] = [[`signup-ip:${clientAddress(c)}`, ADDRESS_SIGNUPS]];
  await checkAllowance(c, keys);
  await spendAllowance(c, keys);
}

export type SignUpResult = { ok: true; accountId: string } | { ok: false; refused: "password"; problem: string } | { ok: false; refused: "email_taken" };

/**
 * A sign-up: a common password is refused before anything is spent; then the address's sign-up
 * allowance is spent (429 when it is used up) and the account is created, unless the email is taken.
 */
export async function signUp(c: Context<AppEnv>, input: Credentials): Promise<SignUpResult> {
  const problem = await newPasswordProblem(input.password);
  if (problem) return { ok: false, refused: "password", problem };
  await limitSignUp(c);
  const { now, uuid } = c.get("deps");
  const accountId = uuid();
  if (!(await createAccount(c.env, input, now(), accountId))) return { ok: false, refused: "email_taken" };
  return { ok: true, accountId };
}

export type SignInResult = { ok: true; accountId: string } | { ok: false; refused: "credentials" | "code_missing" | "code_wrong" };

/**
 * A password sign-in behind the sign-in limits (auth-limits.ts): one unit of the address's and
 * the account's allowance is spent before the password is hashed (429 when either is used up),
 * and given back when the sign-in succeeds, or when the password was right and the code is still
 * to come. A wrong password or a wrong code keeps it spent.
 */
export async function signInAttempt(c: Context<AppEnv>, input: SignIn): Promise<SignInResult> {
  const keys = await signInKeys(c, input.email);
  await spendFirst(c, keys);
  const accountId = await checkCredentials(c.env, input);
  if (!accountId) return { ok: false, refused: "credentials" };
  if (await totpEnabled(c.env, accountId)) {
    if (!input.code) {
      await giveBack(c, keys);
      return { ok: false, refused: "code_missing" };
    }
    const { now } = c.get("deps");
    if (!(await useSecondStep(c.env, c.get("config").ENV_ENCRYPTION_KEY, accountId, input.code, now()))) return { ok: false, refused: "code_wrong" };
  }
  await giveBack(c, keys);
  return { ok: true, accountId };
}

export const PasswordChange = z.object({
  current_password: z.string({ message: "Enter your current password." }).min(1, "Enter your current password.").max(256, "That is not your current password."),
  new_password: Password,
});
export type PasswordChange = z.output<typeof PasswordChange>;

export type PasswordChangeResult = { ok: true; endedSessions: number } | { ok: false; field: keyof PasswordChange; message: string };

/**
 * Changes the signed-in account's password: the current one must be right (checked behind the
 * sign-in limits, as a sign-in is), the new one not among the most common. Every other session
 * of the account ends; the one asking (`sessionId`) stays.
 */
export async function changePassword(c: Context<AppEnv>, accountId: string, sessionId: string, input: PasswordChange): Promise<PasswordChangeResult> {
  const problem = await newPasswordProblem(input.new_password);
  if (problem) return { ok: false, field: "new_password", message: problem };
  const account = await accountCredentials(c.env, accountId);
  if (!account) return { ok: false, field: "current_password", message: "This account no longer exists." };
  const keys = await signInKeys(c, account.email);
  await spendFirst(c, keys);
  if (!(await verifyPassword(input.current_password, account.passwordHash))) {
    return { ok: false, field: "current_password", message: "That is not your current password." };
  }
  await giveBack(c, keys);
  await setPasswordHash(c.env, accountId, await hashPassword(input.new_password));
  return { ok: true, endedSessions: await endOtherSessions(c.env, accountId, sessionId, c.get("deps").now()) };
}
