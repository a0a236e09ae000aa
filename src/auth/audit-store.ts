import { and, desc, eq, gte, lt, lte, type SQL } from "drizzle-orm";
import { database } from "../db/client";
import { apiTokens, auditLog, passkeys } from "../db/schema";
import { randomBytes, toHex } from "../lib/encoding";
import { iso } from "../lib/time";

/**
 * The audit log's table (owner: src/auth/): rows are appended, listed newest first and removed
 * only by the sweep once older than AUDIT_RETENTION_MS. Nothing updates a row. Also the names of
 * the account's own tokens and passkeys, which rows carry beside their ids.
 */

/** Rows are kept 400 days. */
export const AUDIT_RETENTION_MS = 400 * 24 * 3600 * 1000;

export type ActorKind = "session" | "token" | "webhook" | "operator" | "visitor";

export interface AuditRecord {
  accountId: string;
  at: number;
  actor: { kind: ActorKind; id: string | null; name: string | null };
  address: string | null;
  userAgent: string | null;
  action: string;
  resource: { kind: string; id: string | null; name: string | null };
  fields: string[];
  outcome: "done" | "refused";
  code: string | null;
  requestId: string | null;
}

/** The JSON shape of `GET /console/api/audit`'s entries. */
export interface AuditEntry {
  id: string;
  at: string;
  actor: { kind: string; id: string | null; name: string | null };
  address: string | null;
  user_agent: string | null;
  action: string;
  resource: { kind: string; id: string | null; name: string | null };
  fields: string[];
  /** Done, or refused; a refusal's error code is in `code` (null when done). */
  outcome: "done" | "refused";
  code: string | null;
  request_id: string | null;
}

/** A row id that sorts by time: 13 digits of milliseconds, then random hex. */
export function auditId(at: number): string {
  return `${String(at).padStart(13, "0")}-${toHex(randomBytes(6))}`;
}

export async function appendAudit(env: Env, record: AuditRecord): Promise<void> {
  await database(env)
    .insert(auditLog)
    .values({
      id: auditId(record.at),
      accountId: record.accountId,
      at: record.at,
      actorKind: record.actor.kind,
      actorId: record.actor.id,
      actorName: record.actor.name,
      address: record.address,
      userAgent: record.userAgent,
      action: record.action,
      resourceKind: record.resource.kind,
      resourceId: record.resource.id,
      resourceName: record.resource.name,
      fields: JSON.stringify(record.fields),
      outcome: record.outcome,
      code: record.code,
      requestId: record.requestId,
    });
}

export interface AuditQuery {
  before?: string;
  limit: number;
  action?: string;
  /** A resource id, or a resource kind (`app`, `token`…). */
  resource?: string;
  since?: number;
  until?: number;
}

/** One page of the account's log, newest first, and the cursor of the next (older) page. */
export async function listAudit(env: Env, accountId: string, query: AuditQuery): Promise<{ entries: AuditEntry[]; next_before: string | null }> {
  const where: SQL[] = [eq(auditLog.accountId, accountId)];
  if (query.before) where.push(lt(auditLog.id, query.before));
  if (query.action) where.push(eq(auditLog.action, query.action));
  if (query.resource) where.push(RESOURCE_KINDS.has(query.resource) ? eq(auditLog.resourceKind, query.resource) : eq(auditLog.resourceId, query.resource));
  if (query.since !== undefined) where.push(gte(auditLog.at, query.since));
  if (query.until !== undefined) where.push(lte(auditLog.at, query.until));
  const rows = await database(env)
    .select()
    .from(auditLog)
    .where(and(...where))
    .orderBy(desc(auditLog.id))
    .limit(query.limit + 1);
  const page = rows.slice(0, query.limit);
  return { entries: page.map(entry), next_before: rows.length > query.limit ? page[page.length - 1]!.id : null };
}

const RESOURCE_KINDS = new Set(["account", "session", "passkey", "totp", "token", "database", "app", "domain", "wallet", "channel"]);

function entry(r: typeof auditLog.$inferSelect): AuditEntry {
  return {
    id: r.id,
    at: iso(r.at),
    actor: { kind: r.actorKind, id: r.actorId, name: r.actorName },
    address: r.address,
    user_agent: r.userAgent,
    action: r.action,
    resource: { kind: r.resourceKind, id: r.resourceId, name: r.resourceName },
    fields: JSON.parse(r.fields) as string[],
    outcome: r.outcome,
    code: r.code,
    request_id: r.requestId,
  };
}

/** Removes rows past the retention (the cron sweep); how many went. */
export async function sweepAudit(env: Env, now: number): Promise<number> {
  const gone = await database(env).delete(auditLog).where(lt(auditLog.at, now - AUDIT_RETENTION_MS)).returning({ id: auditLog.id });
  return gone.length;
}

/** The name of one of the account's API tokens, for a log row. */
export async function tokenName(env: Env, accountId: string, id: string): Promise<string | null> {
  const row = await database(env).select({ name: apiTokens.name }).from(apiTokens).where(and(eq(apiTokens.id, id), eq(apiTokens.accountId, accountId))).get();
  return row?.name ?? null;
}

/** The name of one of the account's passkeys, for a log row. */
export async function passkeyName(env: Env, accountId: string, id: string): Promise<string | null> {
  const row = await database(env).select({ name: passkeys.name }).from(passkeys).where(and(eq(passkeys.id, id), eq(passkeys.accountId, accountId))).get();
  return row?.name ?? null;
}
