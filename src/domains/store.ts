import { and, asc, desc, eq, gte, inArray, isNull, lt, ne, or } from "drizzle-orm";
import { database } from "../db/client";
import { customDomains, expiredDomainClaims } from "../db/schema";
import { appRoute } from "../apps/store";
import { iso } from "../lib/time";
import { type DnsRecordToCreate, type ServiceTargets, recordToCreate } from "./pointing";
import { EXPIRY_NOTE_DAYS, LOST_REASON, type VerificationRecord, hostnameTaken, verificationRecord } from "./claims";
import { MAX_DOMAINS_PER_APP } from "./refusals";
import { DOMAIN_BADGES, type DomainStatus } from "./states";

/** The `custom_domains` records: every query of this table is here. */

export type DomainRow = typeof customDomains.$inferSelect;

export interface NewDomain {
  id: string;
  hostname: string;
  appId: string;
  createdAt: number;
  nextCheckAt: number;
  token: string;
}

const HELD_SQL = "status IN ('verifying', 'active')";

/**
 * Inserts a `Pending DNS` claim unless the app already has its 3 or some app holds the hostname
 * (`Verifying…`, `Active`), in one statement, so concurrent adds cannot pass them together; the
 * app's own second claim of a name is refused by the (app, hostname) unique index.
 */
export async function insertDomainWithinLimit(env: Env, row: NewDomain): Promise<"inserted" | "limit" | "taken"> {
  try {
    const result = await env.DB.prepare(
      `INSERT INTO custom_domains (id, hostname, app_id, status, created_at, next_check_at, token, waiting_since)
       SELECT ?1, ?2, ?3, 'pending_dns', ?4, ?5, ?7, ?4
       WHERE (SELECT count(*) FROM custom_domains WHERE app_id = ?3) < ?6
         AND NOT EXISTS (SELECT 1 FROM custom_domains WHERE hostname = ?2 AND ${HELD_SQL})`,
    )
      .bind(row.id, row.hostname, row.appId, row.createdAt, row.nextCheckAt, MAX_DOMAINS_PER_APP, row.token)
      .run();
    if (result.meta.changes === 1) return "inserted";
    return (await isHostnameTaken(env, row.hostname, row.appId)) ? "taken" : "limit";
  } catch (err) {
    if (err instanceof Error && /UNIQUE/i.test(err.message)) return "taken";
    throw err;
  }
}

/** Every claim of a hostname, of any app. */
export async function claimsOf(env: Env, hostname: string): Promise<Pick<DomainRow, "id" | "appId" | "status">[]> {
  return database(env).select({ id: customDomains.id, appId: customDomains.appId, status: customDomains.status }).from(customDomains).where(eq(customDomains.hostname, hostname));
}

/** DOMAIN_TAKEN for `appId` (claims.ts `hostnameTaken`): some app holds it, or this app claims it already. */
export async function isHostnameTaken(env: Env, hostname: string, appId: string): Promise<boolean> {
  return hostnameTaken(await claimsOf(env, hostname), appId);
}

export async function countDomains(env: Env, appId: string): Promise<number> {
  return (await listDomains(env, appId)).length;
}

export async function listDomains(env: Env, appId: string): Promise<DomainRow[]> {
  return database(env).select().from(customDomains).where(eq(customDomains.appId, appId)).orderBy(asc(customDomains.createdAt), asc(customDomains.hostname));
}

export async function getDomain(env: Env, appId: string, hostname: string): Promise<DomainRow | undefined> {
  return database(env)
    .select()
    .from(customDomains)
    .where(and(eq(customDomains.appId, appId), eq(customDomains.hostname, hostname.trim().toLowerCase().replace(/\.$/, ""))))
    .get();
}

export async function getDomainById(env: Env, id: string): Promise<DomainRow | undefined> {
  return database(env).select().from(customDomains).where(eq(customDomains.id, id)).get();
}

export type DomainPatch = Partial<Pick<DomainRow, "status" | "reason" | "routeReady" | "https" | "providerRef" | "lastCheckedAt" | "nextCheckAt" | "waitingSince">>;

/**
 * Writes a check's outcome unless the claim changed since it was read (`status` and
 * `nextCheckAt` as read): another app's claim winning meanwhile is not overwritten. False: it had.
 */
export async function updateDomain(env: Env, id: string, patch: DomainPatch, asRead?: Pick<DomainRow, "status" | "nextCheckAt">): Promise<boolean> {
  if (Object.keys(patch).length === 0) return true;
  const unchanged = asRead ? [eq(customDomains.status, asRead.status), asRead.nextCheckAt === null ? isNull(customDomains.nextCheckAt) : eq(customDomains.nextCheckAt, asRead.nextCheckAt)] : [];
  const result = await database(env)
    .update(customDomains)
    .set(patch)
    .where(and(eq(customDomains.id, id), ...unchanged));
  return result.meta.changes > 0;
}

/**
 * A waiting claim whose DNS verified takes the hostname: it becomes `Verifying…` (route not yet in
 * place) and every other waiting claim of the hostname goes `Error` with LOST_REASON and no
 * further re-check, in one batch. The held-hostname unique index refuses it when another app got
 * there first (the batch is rolled back): false, the claim lost.
 */
export async function takeHostname(env: Env, row: DomainRow, now: number): Promise<boolean> {
  const db = database(env);
  try {
    const [taken] = await db.batch([
      db
        .update(customDomains)
        .set({ status: "verifying", reason: null, routeReady: false, waitingSince: null, lastCheckedAt: now })
        .where(and(eq(customDomains.id, row.id), eq(customDomains.status, row.status), row.nextCheckAt === null ? isNull(customDomains.nextCheckAt) : eq(customDomains.nextCheckAt, row.nextCheckAt))),
      db
        .update(customDomains)
        .set({ status: "error", reason: LOST_REASON, nextCheckAt: null, routeReady: false })
        .where(and(eq(customDomains.hostname, row.hostname), ne(customDomains.id, row.id), inArray(customDomains.status, ["pending_dns", "error"]))),
    ]);
    return taken.meta.changes === 1;
  } catch (err) {
    if (err instanceof Error && /UNIQUE/i.test(err.message)) return false;
    throw err;
  }
}

/** A claim another app won: `Error` with LOST_REASON, not re-checked. */
export async function markLost(env: Env, id: string, now: number, waitingSince: number): Promise<void> {
  await database(env).update(customDomains).set({ status: "error", reason: LOST_REASON, nextCheckAt: null, routeReady: false, lastCheckedAt: now, waitingSince }).where(eq(customDomains.id, id));
}

/**
 * Removes a claim that waited too long, keeping a note of it for the app page, in one batch; the
 * notes of the app older than EXPIRY_NOTE_DAYS go with it. Only a waiting claim is removed.
 */
export async function expireClaim(env: Env, row: DomainRow, noteId: string, now: number): Promise<void> {
  const db = database(env);
  await db.batch([
    db.delete(customDomains).where(and(eq(customDomains.id, row.id), inArray(customDomains.status, ["pending_dns", "error"]))),
    db.insert(expiredDomainClaims).values({ id: noteId, appId: row.appId, hostname: row.hostname, expiredAt: now }),
    db.delete(expiredDomainClaims).where(and(eq(expiredDomainClaims.appId, row.appId), lt(expiredDomainClaims.expiredAt, now - EXPIRY_NOTE_DAYS * 86_400_000))),
  ]);
}

/** The app's claims removed for expiry in the last EXPIRY_NOTE_DAYS, newest first. */
export async function recentExpiries(env: Env, appId: string, now: number): Promise<{ hostname: string; expiredAt: number }[]> {
  return database(env)
    .select({ hostname: expiredDomainClaims.hostname, expiredAt: expiredDomainClaims.expiredAt })
    .from(expiredDomainClaims)
    .where(and(eq(expiredDomainClaims.appId, appId), gte(expiredDomainClaims.expiredAt, now - EXPIRY_NOTE_DAYS * 86_400_000)))
    .orderBy(desc(expiredDomainClaims.expiredAt));
}

export async function deleteDomain(env: Env, id: string): Promise<void> {
  await database(env).delete(customDomains).where(eq(customDomains.id, id));
}

/**
 * The app a custom hostname routes to, for the proxy: only `Active` domains and `Verifying…` ones
 * whose route is in place. A removed, unknown, pending or failed hostname gives nothing.
 */
export async function routedApp(env: Env, hostname: string) {
  const domain = await database(env)
    .select({ appId: customDomains.appId })
    .from(customDomains)
    .where(
      and(
        eq(customDomains.hostname, hostname),
        or(eq(customDomains.status, "active"), and(eq(customDomains.status, "verifying"), eq(customDomains.routeReady, true))),
      ),
    )
    .get();
  return domain ? appRoute(env, domain.appId) : undefined;
}

/** A domain as the JSON routes answer it (issue 15). */
export interface DomainView {
  hostname: string;
  status: (typeof DOMAIN_BADGES)[DomainStatus];
  reason: string | null;
  dns_record: DnsRecordToCreate;
  /** The TXT record that proves this claim when DNS points to the shared target or addresses. */
  verification: VerificationRecord;
  last_checked_at: string | null;
  next_check_at: string | null;
  https: boolean;
  created_at: string;
}

export function viewDomain(row: DomainRow, targets: ServiceTargets): DomainView {
  return {
    hostname: row.hostname,
    status: DOMAIN_BADGES[row.status],
    reason: row.status === "error" ? row.reason : null,
    dns_record: recordToCreate(row.hostname, targets),
    verification: verificationRecord(row.hostname, row.token),
    last_checked_at: row.lastCheckedAt === null ? null : iso(row.lastCheckedAt),
    next_check_at: row.nextCheckAt === null ? null : iso(row.nextCheckAt),
    https: row.https,
    created_at: iso(row.createdAt),
  };
}

/** Claims whose check is overdue by `before` (a lost alarm, or an Active domain from before Active re-checks). */
export async function overdueDomainIds(env: Env, before: number, limit = 100): Promise<string[]> {
  const rows = await database(env).select({ id: customDomains.id }).from(customDomains).where(lt(customDomains.nextCheckAt, before)).limit(limit);
  return rows.map((row) => row.id);
}
