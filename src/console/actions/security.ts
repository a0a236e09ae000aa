import type { Context } from "hono";
import { accountEmail } from "../../auth/accounts";
import { endSession } from "../../auth/session";
import { endOtherSessions, endSessionById, listSessions as sessionsOf, type SessionView } from "../../auth/session-list";
import { PasswordChange, changePassword as changeAccountPassword } from "../../auth/sign-in";
import { pendingTotp, recoveryCodesLeft, totpEnabled } from "../../auth/totp-store";
import { TOTP_ALREADY_ON, WRONG_DISABLE_CODE, WRONG_SETUP_CODE, confirmTotp, startTotpSetup, turnOffTotp } from "../../auth/two-step";
import type { AppEnv } from "../../http/context";
import { type Outcome, refuse } from "./outcome";

export { PasswordChange };
export { CodeInput } from "../../auth/two-step";

/**
 * The signed-in account's sessions, password and two-step sign-in: what the console's JSON routes
 * (api/security.ts) and the profile's forms (security-pages.tsx) both do.
 */

export const NO_SUCH_SESSION = "No such session in your account. It may have ended already.";

export interface SecurityOverview {
  sessions: SessionView[];
  totp: { enabled: boolean; recoveryCodesLeft: number };
}

/** The account's sessions, this one marked. */
export async function listSessions(c: Context<AppEnv>): Promise<SessionView[]> {
  return sessionsOf(c.env, c.get("accountId")!, c.get("session")?.id, c.get("deps").now());
}

/** The sessions and the state of two-step sign-in, as the profile page shows them. */
export async function securityOverview(c: Context<AppEnv>): Promise<SecurityOverview> {
  const accountId = c.get("accountId")!;
  const [sessions, enabled, left] = await Promise.all([listSessions(c), totpEnabled(c.env, accountId), recoveryCodesLeft(c.env, accountId)]);
  return { sessions, totp: { enabled, recoveryCodesLeft: left } };
}

/** Signs out every other session of the account; how many ended. */
export async function endOtherSessionsOfAccount(c: Context<AppEnv>): Promise<number> {
  return endOtherSessions(c.env, c.get("accountId")!, c.get("session")!.id, c.get("deps").now());
}

/** Ends one of the account's sessions; ending this one clears its cookie too. */
export async function endOneSession(c: Context<AppEnv>, id: string): Promise<Outcome<{ current: boolean }>> {
  if (!(await endSessionById(c.env, c.get("accountId")!, id))) return refuse("NOT_FOUND", NO_SUCH_SESSION);
  const current = id === c.get("session")?.id;
  if (current) await endSession(c);
  return { ok: true, current };
}

/** Changes the password; every other session of the account ends. */
export async function changePassword(c: Context<AppEnv>, input: PasswordChange): Promise<Outcome<{ endedSessions: number }>> {
  const result = await changeAccountPassword(c, c.get("accountId")!, c.get("session")!.id, input);
  if (!result.ok) return refuse("INVALID_REQUEST", result.message, result.field);
  return { ok: true, endedSessions: result.endedSessions };
}

/** A fresh authenticator secret to set two-step sign-in up with; refused while it is on. */
export async function setUpTwoStep(c: Context<AppEnv>): Promise<Outcome<{ setup: { secret: string; otpauth_url: string } }>> {
  const setup = await startTotpSetup(c, c.get("accountId")!);
  return setup ? { ok: true, setup } : refuse("CONFLICT", TOTP_ALREADY_ON);
}

/** The set-up begun and not yet confirmed (shown again with its QR code), or null. */
export async function pendingTwoStep(c: Context<AppEnv>): Promise<{ secret: string; otpauth_url: string } | null> {
  const accountId = c.get("accountId")!;
  return (await pendingTotp(c.env, c.get("config").ENV_ENCRYPTION_KEY, { id: accountId, email: (await accountEmail(c.env, accountId)) ?? "" })) ?? null;
}

/** Turns two-step sign-in on with a code from the new secret: the recovery codes, shown once. */
export async function turnOnTwoStep(c: Context<AppEnv>, code: string): Promise<Outcome<{ recoveryCodes: string[] }>> {
  const recoveryCodes = await confirmTotp(c, c.get("accountId")!, code);
  return recoveryCodes ? { ok: true, recoveryCodes } : refuse("INVALID_REQUEST", WRONG_SETUP_CODE, "code");
}

/** Turns two-step sign-in off with a current code or a recovery code. */
export async function turnOffTwoStep(c: Context<AppEnv>, code: string): Promise<Outcome> {
  return (await turnOffTotp(c, c.get("accountId")!, code)) ? { ok: true } : refuse("INVALID_REQUEST", WRONG_DISABLE_CODE, "code");
}
