import { type Context, Hono } from "hono";
import { z } from "zod";
import { accountByEmail, insertAccount } from "../../auth/accounts";
import { DECOY_PASSWORD_HASH, hashPassword, verifyPassword } from "../../auth/password";
import { endSession, startSession } from "../../auth/session";
import type { AppEnv } from "../../http/context";
import { ADDRESS_SIGNUPS, checkAllowance, clientAddress, signInKeys, spendAllowance } from "../../http/auth-limits";
import { ApiError } from "../../http/errors";
import type { RatePolicy } from "../../http/gcra";
import { readJson } from "../../http/validate";

export const Credentials = z.object({
  email: z
    .string({ message: "Enter your email address." })
    .trim()
    .toLowerCase()
    .max(254, "That email address is too long.")
    .pipe(z.email({ message: "Enter a valid email address." })),
  password: z
    .string({ message: "Enter a password." })
    .min(8, "Use at least 8 characters for the password.")
    .max(256, "Use at most 256 characters for the password."),
});
export type Credentials = z.output<typeof Credentials>;

export const SAME_ANSWER_FOR_BAD_LOGIN = "The email or password is not right.";

/** Creates an account; false when the email is taken. */
export async function createAccount(env: Env, input: Credentials, now: number, id: string): Promise<boolean> {
  const passwordHash = await hashPassword(input.password);
  return insertAccount(env, { id, email: input.email, passwordHash, createdAt: now });
}

/** The account id for these credentials, or null; unknown emails cost as much as wrong passwords. */
export async function checkCredentials(env: Env, input: Credentials): Promise<string | null> {
  const row = await accountByEmail(env, input.email);
  const ok = await verifyPassword(input.password, row?.passwordHash ?? DECOY_PASSWORD_HASH);
  return ok && row ? row.id : null;
}

/** Counts a sign-up against the client address (each costs a password hash); 429 past the limit. */
export async function limitSignUp(c: Context<AppEnv>): Promise<void> {
  const keys: [string, RatePolicy][] = [[`signup-ip:${clientAddress(c)}`, ADDRESS_SIGNUPS]];
  await checkAllowance(c, keys);
  await spendAllowance(c, keys);
}

/**
 * checkCredentials behind the sign-in limits: 429 before any hash once the address or the account
 * has failed too often; a wrong password spends from both.
 */
export async function signInAttempt(c: Context<AppEnv>, input: Credentials): Promise<string | null> {
  const keys = await signInKeys(c, input.email);
  await checkAllowance(c, keys);
  const id = await checkCredentials(c.env, input);
  if (!id) await spendAllowance(c, keys);
  return id;
}

export const authRoutes = new Hono<AppEnv>()
  .post("/signup", async (c) => {
    const input = await readJson(c, Credentials);
    await limitSignUp(c);
    const { now, uuid } = c.get("deps");
    const id = uuid();
    if (!(await createAccount(c.env, input, now(), id))) {
      throw new ApiError("CONFLICT", "An account with this email already exists. Sign in instead.");
    }
    await startSession(c, id);
    return c.json({ id, email: input.email });
  })
  .post("/login", async (c) => {
    const input = await readJson(c, Credentials);
    const id = await signInAttempt(c, input);
    if (!id) throw new ApiError("UNAUTHORIZED", SAME_ANSWER_FOR_BAD_LOGIN);
    await startSession(c, id);
    return c.json({ id, email: input.email });
  })
  .post("/logout", async (c) => {
    await endSession(c);
    return c.json({ success: true });
  });
