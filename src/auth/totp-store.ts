import { and, eq, isNotNull, isNull, lt, or } from "drizzle-orm";
import type { EncryptionKey } from "../config";
import { database } from "../db/client";
import { accountTotp, recoveryCodes } from "../db/schema";
import { openValue, sealValue } from "../lib/sealing";
import { sha256Hex } from "../lib/encoding";
import { matchTotp, newRecoveryCodes, newTotpSecret, normalRecoveryCode, otpauthUrl } from "./totp";

/**
 * An account's two-step sign-in at rest (tables `account_totp` and `recovery_codes`): the TOTP
 * secret sealed like an environment value (AES-GCM under ENV_ENCRYPTION_KEY, bound to the account
 * and to this purpose), the newest time step accepted, and the recovery codes as SHA-256 hashes.
 * Every "use" below is one conditional UPDATE, so two requests with one code cannot both pass.
 */

/** The associated-data name: not a valid variable name, so no env value's ciphertext can pass for it. */
const PLACE = "@totp";

const place = (accountId: string) => ({ appId: accountId, key: PLACE });

/** Whether the account has two-step sign-in on (set up and confirmed with a code). */
export async function totpEnabled(env: Env, accountId: string): Promise<boolean> {
  const row = await database(env)
    .select({ enabledAt: accountTotp.enabledAt })
    .from(accountTotp)
    .where(eq(accountTotp.accountId, accountId))
    .get();
  return row?.enabledAt != null;
}

/** The account's secret in clear, and whether it is enabled; undefined when none was set up. */
async function totpSecret(env: Env, keys: readonly EncryptionKey[], accountId: string): Promise<{ secret: string; enabled: boolean } | undefined> {
  const row = await database(env).select().from(accountTotp).where(eq(accountTotp.accountId, accountId)).get();
  if (!row) return undefined;
  return { secret: await openValue(keys, place(accountId), row.secret), enabled: row.enabledAt !== null };
}

/**
 * Starts setting up (or starts again): a fresh secret, kept until a code from it confirms it.
 * Undefined when two-step sign-in is on already (it must be turned off first).
 */
export async function setUpTotp(env: Env, keys: readonly EncryptionKey[], account: { id: string; email: string }, now: number) {
  const secret = newTotpSecret();
  const sealed = await sealValue(keys, place(account.id), secret);
  const saved = await database(env)
    .insert(accountTotp)
    .values({ accountId: account.id, secret: sealed, createdAt: now })
    .onConflictDoUpdate({ target: accountTotp.accountId, set: { secret: sealed, createdAt: now, lastStep: null }, setWhere: isNull(accountTotp.enabledAt) })
    .returning({ accountId: accountTotp.accountId });
  return saved.length === 1 ? { secret, otpauth_url: otpauthUrl(secret, account.email) } : undefined;
}

/** The secret being set up (not yet confirmed) and its URL; undefined when none is. */
export async function pendingTotp(env: Env, keys: readonly EncryptionKey[], account: { id: string; email: string }) {
  const state = await totpSecret(env, keys, account.id);
  return state && !state.enabled ? { secret: state.secret, otpauth_url: otpauthUrl(state.secret, account.email) } : undefined;
}

/** Marks `step` used unless it (or a later one) was used already; false when it was. */
async function useStep(env: Env, accountId: string, step: number, enabling: boolean, now: number): Promise<boolean> {
  const used = await database(env)
    .update(accountTotp)
    .set(enabling ? { lastStep: step, enabledAt: now } : { lastStep: step })
    .where(
      and(
        eq(accountTotp.accountId, accountId),
        enabling ? isNull(accountTotp.enabledAt) : isNotNull(accountTotp.enabledAt),
        or(isNull(accountTotp.lastStep), lt(accountTotp.lastStep, step)),
      ),
    )
    .returning({ accountId: accountTotp.accountId });
  return used.length === 1;
}

/**
 * Confirms a set-up secret with a code from it: two-step sign-in is on from now, and the ten
 * recovery codes (returned here, in clear, once) replace any earlier ones. Null when the code is
 * not right (or nothing is being set up).
 */
export async function enableTotp(env: Env, keys: readonly EncryptionKey[], accountId: string, code: string, now: number): Promise<string[] | null> {
  const state = await totpSecret(env, keys, accountId);
  if (!state || state.enabled) return null;
  const step = matchTotp(state.secret, code, now);
  if (step === null || !(await useStep(env, accountId, step, true, now))) return null;
  const codes = newRecoveryCodes();
  const rows = await Promise.all(codes.map(async (c) => ({ accountId, codeHash: await sha256Hex(c) })));
  const db = database(env);
  await db.batch([db.delete(recoveryCodes).where(eq(recoveryCodes.accountId, accountId)), db.insert(recoveryCodes).values(rows)]);
  return codes;
}

/**
 * Checks and spends a second-step code of an account with two-step sign-in on: a TOTP code of
 * the current step (or one beside it) newer than the last one accepted, or an unused recovery
 * code. False for anything else.
 */
export async function useSecondStep(env: Env, keys: readonly EncryptionKey[], accountId: string, code: string, now: number): Promise<boolean> {
  const state = await totpSecret(env, keys, accountId);
  if (!state?.enabled) return false;
  const step = matchTotp(state.secret, code, now);
  if (step !== null) return useStep(env, accountId, step, false, now);
  const recovery = normalRecoveryCode(code);
  if (!recovery) return false;
  const used = await database(env)
    .update(recoveryCodes)
    .set({ usedAt: now })
    .where(and(eq(recoveryCodes.accountId, accountId), eq(recoveryCodes.codeHash, await sha256Hex(recovery)), isNull(recoveryCodes.usedAt)))
    .returning({ accountId: recoveryCodes.accountId });
  return used.length === 1;
}

/** Turns two-step sign-in off: the secret and the recovery codes are gone. */
export async function removeTotp(env: Env, accountId: string): Promise<void> {
  const db = database(env);
  await db.batch([db.delete(recoveryCodes).where(eq(recoveryCodes.accountId, accountId)), db.delete(accountTotp).where(eq(accountTotp.accountId, accountId))]);
}

/** How many of the account's recovery codes are still unused. */
export async function recoveryCodesLeft(env: Env, accountId: string): Promise<number> {
  const rows = await database(env)
    .select({ codeHash: recoveryCodes.codeHash })
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.accountId, accountId), isNull(recoveryCodes.usedAt)));
  return rows.length;
}
