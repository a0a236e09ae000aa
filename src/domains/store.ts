import { and, asc, eq, or } from "drizzle-orm";
import { database } from "../db/client";
import { customDomains } from "../db/schema";
import { appRoute } from "../apps/store";
import { iso } from "../lib/time";
import { type DnsRecordToCreate, type ServiceTargets, recordToCreate } from "./pointing";
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
}

/**
 * Inserts a `Pending DNS` domain unless the app already has its 3 (one statement, so concurrent
 * adds cannot pass the limit together) or the hostname is mapped anywhere (the unique index).
 */
export async function insertDomainWithinLimit(env: Env, row: NewDomain): Promise<"inserted" | "limit" | "taken"> {
  try {
    const result = await env.DB.prepare(
      `INSERT INTO custom_domains (id, hostname, app_id, status, created_at, next_check_at)
       SELECT ?1, ?2, ?3, 'pending_dns', ?4, ?5
       WHERE (SELECT count(*) FROM custom_domains WHERE app_id = ?3) < ?6`,
    )
      .bind(row.id, row.hostname, row.appId, row.createdAt, row.nextCheckAt, MAX_DOMAINS_PER_APP)
      .run();
    return result.meta.changes === 1 ? "inserted" : "limit";
  } catch (err) {
    if (err instanceof Error && /UNIQUE/i.test(err.message)) return "taken";
    throw err;
  }
}

export async function isHostnameTaken(env: Env, hostname: string): Promise<boolean> {
  const row = await database(env).select({ id: customDomains.id }).from(customDomains).where(eq(customDomains.hostname, hostname)).get();
  return row !== undefined;
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

export type DomainPatch = Partial<Pick<DomainRow, "status" | "reason" | "routeReady" | "https" | "providerRef" | "lastCheckedAt" | "nextCheckAt">>;

export async function updateDomain(env: Env, id: string, patch: DomainPatch): Promise<void> {
  if (Object.keys(patch).length > 0) await database(env).update(customDomains).set(patch).where(eq(customDomains.id, id));
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
    last_checked_at: row.lastCheckedAt === null ? null : iso(row.lastCheckedAt),
    next_check_at: row.nextCheckAt === null ? null : iso(row.nextCheckAt),
    https: row.https,
    created_at: iso(row.createdAt),
  };
}
