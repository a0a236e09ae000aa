import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";
import type { Context } from "hono";
import { z } from "zod";
import { accountEmail } from "../../auth/accounts";
import {
  finishRegistration,
  finishSignIn,
  listPasskeys as passkeysOf,
  type PasskeyView,
  registrationOptions,
  relyingParty,
  removePasskey as deletePasskey,
  signInOptions,
} from "../../auth/passkeys";
import { startSession } from "../../auth/session";
import { ADDRESS_FAILURES, checkAllowance, clientAddress, spendAllowance } from "../../http/auth-limits";
import type { AppEnv } from "../../http/context";
import type { RatePolicy } from "../../http/gcra";
import { type Outcome, refuse } from "./outcome";

/**
 * Passkeys: list, add (options, then the browser's answer), remove, and sign in with one (options,
 * then the answer: a session starts, no password asked). The JSON routes (api/passkeys.ts, which
 * the passkey script calls) and the profile page's remove form (passkeys-section.tsx) call these.
 */

/** A WebAuthn answer as @simplewebauthn/browser sends it; the library checks the rest. */
export const Credential = z.looseObject({ id: z.string().min(1).max(1024), response: z.looseObject({ clientDataJSON: z.string() }) });

export const PasskeyName = z
  .string({ message: "Give the passkey a name." })
  .trim()
  .min(1, "Give the passkey a name.")
  .max(100, "Use at most 100 characters for the passkey name.");

export const NewPasskey = z.object({ name: PasskeyName, response: Credential });
export const PasskeySignIn = z.object({ response: Credential });

export const NOT_VERIFIED = "The passkey could not be verified. Try again.";

export type { PasskeyView };

/** A passkey sign-in's answer: the account and the passkey that signed in. */
export interface PasskeySignedIn {
  id: string;
  email: string | undefined;
  passkey: { id: string; name: string };
}

/** Failed passkey sign-ins count against the client address like wrong passwords. */
const signInKeys = (c: Context<AppEnv>): [string, RatePolicy][] => [[`auth-ip:${clientAddress(c)}`, ADDRESS_FAILURES]];

export async function listPasskeys(c: Context<AppEnv>): Promise<PasskeyView[]> {
  return passkeysOf(c.env, c.get("accountId")!);
}

/** Options for the browser to make a passkey for this account (its passkeys excluded). */
export async function passkeyOptions(c: Context<AppEnv>) {
  const accountId = c.get("accountId")!;
  const email = (await accountEmail(c.env, accountId)) ?? accountId;
  return registrationOptions(c.env, relyingParty(c.req.url), { id: accountId, email }, c.get("deps").now());
}

/** Keeps the browser's new passkey once its answer verifies. */
export async function addPasskey(c: Context<AppEnv>, input: z.output<typeof NewPasskey>): Promise<Outcome<{ passkey: PasskeyView }>> {
  const saved = await finishRegistration(c.env, relyingParty(c.req.url), {
    accountId: c.get("accountId")!,
    name: input.name,
    response: input.response as unknown as RegistrationResponseJSON,
    now: c.get("deps").now(),
  });
  return saved ? { ok: true, passkey: saved } : refuse("INVALID_REQUEST", NOT_VERIFIED, "response");
}

/** Removes one of the account's passkeys: its name, or null when it has no such passkey. */
export async function removePasskey(c: Context<AppEnv>, id: string): Promise<string | null> {
  return deletePasskey(c.env, c.get("accountId")!, id);
}

/** Options for the browser to sign in with any passkey of this site. */
export async function passkeySignInOptions(c: Context<AppEnv>) {
  return signInOptions(c.env, relyingParty(c.req.url), c.get("deps").now());
}

/** Signs in with a passkey, behind the address's failure allowance (429 when it is used up). */
export async function signInWithPasskey(c: Context<AppEnv>, input: z.output<typeof PasskeySignIn>): Promise<Outcome<{ reply: PasskeySignedIn }>> {
  const keys = signInKeys(c);
  await checkAllowance(c, keys);
  const found = await finishSignIn(c.env, relyingParty(c.req.url), input.response as unknown as AuthenticationResponseJSON, c.get("deps").now());
  if (!found) {
    await spendAllowance(c, keys);
    return refuse("UNAUTHORIZED", NOT_VERIFIED);
  }
  await startSession(c, found.accountId);
  return { ok: true, reply: { id: found.accountId, email: await accountEmail(c.env, found.accountId), passkey: { id: found.passkeyId, name: found.name } } };
}
