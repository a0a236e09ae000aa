import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type RegistrationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { and, desc, eq, gt, lte } from "drizzle-orm";
import { database } from "../db/client";
import { passkeyChallenges, passkeys } from "../db/schema";
import { fromBase64Url, toBase64Url, utf8 } from "../lib/encoding";
import { iso } from "../lib/time";

/**
 * Passkeys (WebAuthn) with @simplewebauthn/server, and the `passkeys` and `passkey_challenges`
 * tables (owner: src/auth/). The relying party is the console's own host (`rp`). Every ceremony
 * starts with a challenge row, and the answer takes (deletes) that row before it is checked, so a
 * challenge serves one answer at most. Passkeys are discoverable: sign-in asks for no email.
 */

/** How long a challenge may be answered. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

export const RP_NAME = "Console";

/** The relying party: the console's hostname and origin, from the request URL. */
export interface RelyingParty {
  id: string;
  origin: string;
}

export function relyingParty(url: string): RelyingParty {
  const parsed = new URL(url);
  return { id: parsed.hostname, origin: parsed.origin };
}

export interface PasskeyView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export async function listPasskeys(env: Env, accountId: string): Promise<PasskeyView[]> {
  const rows = await database(env)
    .select({ id: passkeys.id, name: passkeys.name, createdAt: passkeys.createdAt, lastUsedAt: passkeys.lastUsedAt })
    .from(passkeys)
    .where(eq(passkeys.accountId, accountId))
    .orderBy(desc(passkeys.createdAt));
  return rows.map(view);
}

function view(r: { id: string; name: string; createdAt: number; lastUsedAt: number | null }): PasskeyView {
  return { id: r.id, name: r.name, created_at: iso(r.createdAt), last_used_at: r.lastUsedAt === null ? null : iso(r.lastUsedAt) };
}

/** Removes one of the account's passkeys at once; its name, or null when there is no such passkey. */
export async function removePasskey(env: Env, accountId: string, id: string): Promise<string | null> {
  const gone = await database(env)
    .delete(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.accountId, accountId)))
    .returning({ name: passkeys.name });
  return gone[0]?.name ?? null;
}

async function saveChallenge(env: Env, kind: "register" | "signin", challenge: string, accountId: string | null, now: number) {
  await database(env).insert(passkeyChallenges).values({ challenge, kind, accountId, expiresAt: now + CHALLENGE_TTL_MS });
}

/** Takes the challenge (one use): true when it existed, was unexpired, of this kind and for this account. */
async function takeChallenge(env: Env, kind: "register" | "signin", challenge: string, accountId: string | null, now: number): Promise<boolean> {
  const taken = await database(env)
    .delete(passkeyChallenges)
    .where(and(eq(passkeyChallenges.challenge, challenge), gt(passkeyChallenges.expiresAt, now)))
    .returning({ kind: passkeyChallenges.kind, accountId: passkeyChallenges.accountId });
  return taken.length === 1 && taken[0]!.kind === kind && taken[0]!.accountId === accountId;
}

/** Removes challenges nobody answered in time (the cron sweep). */
export async function sweepPasskeyChallenges(env: Env, now: number): Promise<void> {
  await database(env).delete(passkeyChallenges).where(lte(passkeyChallenges.expiresAt, now));
}

/** Options for `navigator.credentials.create`: a resident key, the account's passkeys excluded. */
export async function registrationOptions(env: Env, rp: RelyingParty, account: { id: string; email: string }, now: number) {
  const existing = await database(env).select({ id: passkeys.id }).from(passkeys).where(eq(passkeys.accountId, account.id));
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.id,
    userName: account.email,
    userID: utf8(account.id),
    attestationType: "none",
    excludeCredentials: existing.map((p) => ({ id: p.id })),
    authenticatorSelection: { residentKey: "required", userVerification: "preferred" },
  });
  await saveChallenge(env, "register", options.challenge, account.id, now);
  return options;
}

/** Checks a new passkey's attestation and keeps it; null when it does not verify (or its challenge is used up). */
export async function finishRegistration(
  env: Env,
  rp: RelyingParty,
  input: { accountId: string; name: string; response: RegistrationResponseJSON; now: number },
): Promise<PasskeyView | null> {
  const result = await verifyRegistrationResponse({
    response: input.response,
    expectedChallenge: (challenge) => takeChallenge(env, "register", challenge, input.accountId, input.now),
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    requireUserVerification: false,
  }).catch(() => null);
  if (!result?.verified) return null;
  const { credential } = result.registrationInfo;
  const row = {
    id: credential.id,
    accountId: input.accountId,
    name: input.name,
    publicKey: toBase64Url(credential.publicKey),
    counter: credential.counter,
    transports: credential.transports ? JSON.stringify(credential.transports) : null,
    createdAt: input.now,
    lastUsedAt: null,
  };
  const saved = await database(env).insert(passkeys).values(row).onConflictDoNothing().returning({ id: passkeys.id });
  return saved.length === 1 ? view(row) : null;
}

/** Options for `navigator.credentials.get`: no list of credentials, the browser offers the site's passkeys. */
export async function signInOptions(env: Env, rp: RelyingParty, now: number) {
  const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: "preferred" });
  await saveChallenge(env, "signin", options.challenge, null, now);
  return options;
}

/** The passkey's account when the assertion verifies (its counter and last use are then saved); null otherwise. */
export async function finishSignIn(
  env: Env,
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
  now: number,
): Promise<{ accountId: string; passkeyId: string; name: string } | null> {
  const row = await database(env).select().from(passkeys).where(eq(passkeys.id, response.id)).get();
  const publicKey = row ? fromBase64Url(row.publicKey) : null;
  if (!row || !publicKey) {
    await takeChallenge(env, "signin", clientChallenge(response) ?? "", null, now);
    return null;
  }
  const result = await verifyAuthenticationResponse({
    response,
    expectedChallenge: (challenge) => takeChallenge(env, "signin", challenge, null, now),
    expectedOrigin: rp.origin,
    expectedRPID: rp.id,
    credential: { id: row.id, publicKey, counter: row.counter, transports: parseTransports(row.transports) },
    requireUserVerification: false,
  }).catch(() => null);
  if (!result?.verified) return null;
  await database(env)
    .update(passkeys)
    .set({ counter: result.authenticationInfo.newCounter, lastUsedAt: now })
    .where(eq(passkeys.id, row.id));
  return { accountId: row.accountId, passkeyId: row.id, name: row.name };
}

/** The challenge a client answered, read from its clientDataJSON; null when unreadable. */
export function clientChallenge(response: { response?: { clientDataJSON?: unknown } }): string | null {
  const encoded = response.response?.clientDataJSON;
  const bytes = typeof encoded === "string" ? fromBase64Url(encoded) : null;
  if (!bytes) return null;
  try {
    const challenge = (JSON.parse(new TextDecoder().decode(bytes)) as { challenge?: unknown }).challenge;
    return typeof challenge === "string" ? challenge : null;
  } catch {
    return null;
  }
}

function parseTransports(text: string | null): AuthenticatorTransport[] | undefined {
  return text ? (JSON.parse(text) as AuthenticatorTransport[]) : undefined;
}
