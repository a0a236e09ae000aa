import { and, desc, eq, inArray, lt } from "drizzle-orm";
import { getConfig } from "../config";
import { database } from "../db/client";
import { notificationChannels, notificationDeliveries, notificationIncidents } from "../db/schema";
import { openValue, sealValue } from "../lib/sealing";
import { notFound } from "../http/errors";
import type { ChannelKind } from "./formats";
import { newChannelSecret } from "./signing";

/**
 * Every query of the alerts' tables (owner: src/notifications/): channels with their sealed
 * secrets, the delivery outbox, and the open incidents.
 */

export type ChannelRow = typeof notificationChannels.$inferSelect;
export type DeliveryRow = typeof notificationDeliveries.$inferSelect;

/** Where a channel's secret is sealed: bound to the channel and to this purpose (src/lib/sealing.ts). */
const place = (channelId: string) => ({ appId: channelId, key: "@notification_secret" });

/** Makes a channel; a webhook's secret is made here, sealed, and returned this once. */
export async function createChannel(
  env: Env,
  input: { accountId: string; kind: ChannelKind; url: string; events: string[]; consoleOrigin: string; now: number },
): Promise<{ row: ChannelRow; secret: string | null }> {
  const id = crypto.randomUUID();
  const secret = input.kind === "webhook" ? newChannelSecret() : null;
  const sealed = secret === null ? null : await sealValue(getConfig(env).ENV_ENCRYPTION_KEY, place(id), secret);
  const row: ChannelRow = { id, accountId: input.accountId, kind: input.kind, url: input.url, events: input.events, secret: sealed, consoleOrigin: input.consoleOrigin, createdAt: input.now };
  await database(env).insert(notificationChannels).values(row);
  return { row, secret };
}

export async function openChannelSecret(env: Env, row: ChannelRow): Promise<string | null> {
  return row.secret ? openValue(getConfig(env).ENV_ENCRYPTION_KEY, place(row.id), row.secret) : null;
}

export async function listChannels(env: Env, accountId: string): Promise<ChannelRow[]> {
  return database(env).select().from(notificationChannels).where(eq(notificationChannels.accountId, accountId)).orderBy(notificationChannels.createdAt).all();
}

/** The account's channel; another account's answers 404 like a missing one. */
export async function getOwnedChannel(env: Env, accountId: string, id: string): Promise<ChannelRow> {
  const row = await channelById(env, id);
  if (!row || row.accountId !== accountId) throw notFound("No notification channel with this id exists in your account.");
  return row;
}

export async function channelById(env: Env, id: string): Promise<ChannelRow | undefined> {
  return database(env).select().from(notificationChannels).where(eq(notificationChannels.id, id)).get();
}

export async function deleteChannel(env: Env, accountId: string, id: string): Promise<void> {
  await database(env).delete(notificationChannels).where(and(eq(notificationChannels.id, id), eq(notificationChannels.accountId, accountId)));
}

/** The account's channels that asked for `event`. */
export async function channelsFor(env: Env, accountId: string, event: string): Promise<ChannelRow[]> {
  return (await listChannels(env, accountId)).filter((c) => c.events.includes(event));
}

/** Writes one delivery row unless the channel already has one for this incident key; true when written. */
export async function insertDelivery(env: Env, row: Omit<DeliveryRow, "attempts" | "statusCode" | "error" | "status">): Promise<boolean> {
  const result = await env.DB.prepare(
    `INSERT OR IGNORE INTO notification_deliveries (id, account_id, channel_id, event, event_key, app_id, payload, status, attempts, created_at, updated_at, next_attempt_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
  )
    .bind(row.id, row.accountId, row.channelId, row.event, row.eventKey, row.appId, row.payload, row.createdAt, row.updatedAt, row.nextAttemptAt)
    .run();
  return result.meta.changes === 1;
}

export async function deliveryById(env: Env, id: string): Promise<DeliveryRow | undefined> {
  return database(env).select().from(notificationDeliveries).where(eq(notificationDeliveries.id, id)).get();
}

/**
 * Takes the next try of a pending delivery: its attempts go from `attempts` to one more, only if
 * nobody took that try first (a second message for one row sends nothing). `leaseSeconds`: how
 * long the sweep leaves it alone.
 */
export async function claimTry(env: Env, id: string, attempts: number, now: number, leaseSeconds: number): Promise<boolean> {
  const result = await env.DB.prepare(
    "UPDATE notification_deliveries SET attempts = attempts + 1, updated_at = ?, next_attempt_at = ? WHERE id = ? AND status = 'pending' AND attempts = ?",
  )
    .bind(now, now + leaseSeconds * 1000, id, attempts)
    .run();
  return result.meta.changes === 1;
}

/** The outcome of a try: delivered, failed for good, or pending until `nextAttemptAt`. */
export async function recordTry(env: Env, id: string, outcome: { status: DeliveryRow["status"]; statusCode: number | null; error: string | null; nextAttemptAt: number; now: number }): Promise<void> {
  await database(env)
    .update(notificationDeliveries)
    .set({ status: outcome.status, statusCode: outcome.statusCode, error: outcome.error, nextAttemptAt: outcome.nextAttemptAt, updatedAt: outcome.now })
    .where(eq(notificationDeliveries.id, id));
}

/** The account's last deliveries, newest first. */
export async function listDeliveries(env: Env, accountId: string, limit: number): Promise<DeliveryRow[]> {
  return database(env).select().from(notificationDeliveries).where(eq(notificationDeliveries.accountId, accountId)).orderBy(desc(notificationDeliveries.createdAt), desc(notificationDeliveries.id)).limit(limit).all();
}

/** Pending deliveries whose next try is overdue by then (their queue message was lost). */
export async function overdueDeliveries(env: Env, before: number): Promise<DeliveryRow[]> {
  return database(env)
    .select()
    .from(notificationDeliveries)
    .where(and(eq(notificationDeliveries.status, "pending"), lt(notificationDeliveries.nextAttemptAt, before)))
    .limit(100)
    .all();
}

/** The kinds of incident open for a subject (an app's id, or `account:<id>`). */
export async function openIncidents(env: Env, subject: string): Promise<Set<string>> {
  const rows = await database(env).select({ kind: notificationIncidents.kind }).from(notificationIncidents).where(eq(notificationIncidents.subject, subject)).all();
  return new Set(rows.map((r) => r.kind));
}

/** Opens an incident; true when this call opened it (none was open). */
export async function openIncident(env: Env, subject: string, kind: string, now: number): Promise<boolean> {
  const result = await env.DB.prepare("INSERT OR IGNORE INTO notification_incidents (subject, kind, opened_at) VALUES (?, ?, ?)").bind(subject, kind, now).run();
  return result.meta.changes === 1;
}

/** Closes an incident; true when this call closed it. */
export async function closeIncident(env: Env, subject: string, kind: string): Promise<boolean> {
  const result = await env.DB.prepare("DELETE FROM notification_incidents WHERE subject = ? AND kind = ?").bind(subject, kind).run();
  return result.meta.changes === 1;
}

/** An app's incidents go with it. */
export async function forgetIncidents(env: Env, subject: string): Promise<void> {
  await database(env).delete(notificationIncidents).where(eq(notificationIncidents.subject, subject));
}

/** The subjects with an open incident of `kind`. */
export async function openSubjects(env: Env, kind: string): Promise<string[]> {
  const rows = await database(env).select({ subject: notificationIncidents.subject }).from(notificationIncidents).where(eq(notificationIncidents.kind, kind)).all();
  return rows.map((r) => r.subject);
}

/** Finished deliveries (delivered or failed) raised before `before` are removed; how many went. */
export async function dropFinishedDeliveries(env: Env, before: number): Promise<number> {
  const gone = await database(env)
    .delete(notificationDeliveries)
    .where(and(inArray(notificationDeliveries.status, ["delivered", "failed"]), lt(notificationDeliveries.createdAt, before)))
    .returning({ id: notificationDeliveries.id });
  return gone.length;
}
