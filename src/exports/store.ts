import { and, desc, eq, gt, inArray, isNull, lte, ne, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { database } from "../db/client";
import { exports } from "../db/schema";
import { deleteDatabaseQuery } from "../databases/records";
import { deleteObjects, insertOwed, owedDeletions, settle } from "./cleanup";
import { IN_FLIGHT } from "./export-state";
import { TtlCache } from "../lib/ttl-cache";
import { RECORD_KEEP_MS } from "./record-keep";

/**
 * The one owner of export records: every query of the D1 `exports` table, and where an export's
 * objects live in R2. The state rules these records follow are in export-state.ts.
 */

/** An export record as D1 keeps it. */
export type ExportRecord = typeof exports.$inferSelect;

/** Identifies one export of one database (the queue message carries the same pair). */
export interface ExportRef {
  databaseId: string;
  exportId: string;
}

const IN_FLIGHT_STATUSES = [...IN_FLIGHT];
/** Operator detail kept in `failure_reason`; longer messages are cut. */
const MAX_REASON_CHARS = 500;
/** D1 binds at most 100 parameters per query: a group of ids plus a few more fit in one. */
export const STORE_BATCH = 95;

/** Where an export's archive lives in R2. */
export function archiveKey(databaseId: string, exportId: string): string {
  return `exports/${databaseId}/${exportId}.sql.gz`;
}

/** Where an archive's parts wait until its hash is known. */
export function stagingKey(key: string): string {
  return `${key}.staging`;
}

/** Every object an export may have left in R2: the archive and its staging object. */
export function exportObjectKeys(ref: ExportRef): string[] {
  const key = archiveKey(ref.databaseId, ref.exportId);
  return [key, stagingKey(key)];
}

const byRef = (ref: ExportRef) => and(eq(exports.id, ref.exportId), eq(exports.databaseId, ref.databaseId));

/** Records a new `pending` export. */
export async function insertPendingExport(env: Env, ref: ExportRef, createdAt: number, deadlineAt: number): Promise<void> {
  await database(env).insert(exports).values({ id: ref.exportId, databaseId: ref.databaseId, status: "pending", createdAt, deadlineAt, runnerAliveAt: createdAt });
  forgetExport(ref);
}

/** Removes an export whose job could not be queued, as if it had never been accepted. */
export async function withdrawExport(env: Env, ref: ExportRef): Promise<void> {
  await database(env).delete(exports).where(byRef(ref));
  forgetExport(ref);
}

/** One export of a database, or null when it is missing or another database's. */
export async function findExport(env: Env, ref: ExportRef): Promise<ExportRecord | null> {
  return (await database(env).select().from(exports).where(byRef(ref)).get()) ?? null;
}

/** What a download link's poll reads of its export: the clock fields and the archive's size and hash. */
export type DownloadRecord = Pick<ExportRecord, "status" | "finishedAt" | "deadlineAt" | "sizeBytes" | "sha256">;

/**
 * What polls of download links read is kept per isolate for RECORD_KEEP_MS (record-keep.ts) of real time, so a link
 * polled hard (a busy loop, or many clients sharing one link) costs one D1 read a second per
 * isolate, not one per poll. Every write below forgets the records it touches, so this isolate
 * sees its own writes at once; another isolate's write shows here within RECORD_KEEP_MS (a poll
 * may say `pending` for that long after the export began running or became ready, which the
 * client's next poll corrects). The clock's rules (deadline, retention) are applied to the record
 * at each poll (observedStatus), so they hold to the millisecond whatever the record's age.
 */
const downloadRecords = new TtlCache<DownloadRecord | null>(1000);
const recordKey = (ref: ExportRef) => `${ref.databaseId}/${ref.exportId}`;

function forgetExport(ref: ExportRef): void {
  downloadRecords.delete(recordKey(ref));
}

/** The few columns a poll of a download link needs (not the checkpoint of a running export); `fresh` reads D1 whatever is kept. */
export async function findExportForDownload(env: Env, ref: ExportRef, options: { fresh?: boolean } = {}): Promise<DownloadRecord | null> {
  const key = recordKey(ref);
  const kept = options.fresh ? undefined : downloadRecords.get(key, Date.now());
  if (kept !== undefined) return kept;
  const columns = { status: exports.status, finishedAt: exports.finishedAt, deadlineAt: exports.deadlineAt, sizeBytes: exports.sizeBytes, sha256: exports.sha256 };
  const record = (await database(env).select(columns).from(exports).where(byRef(ref)).get()) ?? null;
  downloadRecords.set(key, record, Date.now() + RECORD_KEEP_MS);
  return record;
}

/** The newest exports of a database, newest first. */
export function listExports(env: Env, databaseId: string, limit: number): Promise<ExportRecord[]> {
  return database(env).select().from(exports).where(eq(exports.databaseId, databaseId)).orderBy(desc(exports.createdAt)).limit(limit);
}

/**
 * The newest export of a database that is not recorded as failed. The gate never lets a second
 * export start while one is in flight, so if any export is pending or running it is this one.
 */
export async function latestUnfailedExport(env: Env, databaseId: string): Promise<ExportRecord | null> {
  const row = await database(env)
    .select()
    .from(exports)
    .where(and(eq(exports.databaseId, databaseId), ne(exports.status, "failed")))
    .orderBy(desc(exports.createdAt))
    .limit(1)
    .get();
  return row ?? null;
}

/** What a claimed export's job goes on from: its checkpoint count and last checkpoint (JSON, progress.ts). */
export interface ClaimedExport {
  step: number;
  progress: string | null;
  deadlineAt: number;
}

/**
 * A try of the job takes the export: `running`, unless it is no longer in flight or past its
 * deadline (null). It goes on from the export's latest checkpoint, whichever message it came by.
 */
export async function claimExport(env: Env, ref: ExportRef, now: number, attempts: number): Promise<ClaimedExport | null> {
  const claimed = await database(env)
    .update(exports)
    .set({ status: "running", startedAt: sql`coalesce(${exports.startedAt}, ${now})`, attempts, runnerAliveAt: now })
    .where(and(byRef(ref), inArray(exports.status, IN_FLIGHT_STATUSES), gt(exports.deadlineAt, now)))
    .returning({ step: exports.step, progress: exports.progress, deadlineAt: exports.deadlineAt });
  forgetExport(ref);
  return claimed[0] ?? null;
}

/**
 * Stores checkpoint `step + 1` of a running export with its new deadline (see deadlineAfterCheckpoint).
 * False when the export is no longer running at checkpoint `step` (failed, deleted, or another
 * try from the same checkpoint got there first): the caller's work is then not the export's.
 */
export async function checkpointExport(env: Env, ref: ExportRef, step: number, progress: string, deadlineAt: number, now: number): Promise<boolean> {
  const updated = await database(env)
    .update(exports)
    .set({ step: step + 1, progress, deadlineAt, runnerAliveAt: now, revivals: 0 })
    .where(and(byRef(ref), eq(exports.status, "running"), eq(exports.step, step), gt(exports.deadlineAt, now)))
    .returning({ id: exports.id });
  forgetExport(ref);
  return updated.length === 1;
}

/**
 * The runner's sign of life: a heartbeat (`at` = now), or a retry due at `at`. False when the
 * export is no longer in flight (failed, finished by another try, deleted): the runner should stop.
 */
export async function noteRunnerAlive(env: Env, ref: ExportRef, at: number): Promise<boolean> {
  const updated = await database(env)
    .update(exports)
    .set({ runnerAliveAt: at })
    .where(and(byRef(ref), inArray(exports.status, IN_FLIGHT_STATUSES)))
    .returning({ id: exports.id });
  return updated.length === 1;
}

/**
 * Counts a revival of a silent export (its job is queued again): only over the record as the
 * watch saw it, so a watch run twice, or a runner that spoke up meanwhile, changes nothing (false).
 */
export async function reviveExport(env: Env, ref: ExportRef, seen: Pick<ExportRecord, "revivals" | "runnerAliveAt">, now: number): Promise<boolean> {
  const alive = seen.runnerAliveAt === null ? isNull(exports.runnerAliveAt) : eq(exports.runnerAliveAt, seen.runnerAliveAt);
  const updated = await database(env)
    .update(exports)
    .set({ revivals: seen.revivals + 1, runnerAliveAt: now })
    .where(and(byRef(ref), inArray(exports.status, IN_FLIGHT_STATUSES), eq(exports.revivals, seen.revivals), alive))
    .returning({ id: exports.id });
  forgetExport(ref);
  return updated.length === 1;
}

/** Databases with an in-flight export whose runner has been silent since `cutoff` (Unix ms) or before. */
export async function databasesWithSilentExports(env: Env, cutoff: number, limit = STORE_BATCH): Promise<string[]> {
  const rows = await database(env)
    .selectDistinct({ databaseId: exports.databaseId })
    .from(exports)
    .where(and(inArray(exports.status, IN_FLIGHT_STATUSES), lte(sql`coalesce(${exports.runnerAliveAt}, ${exports.createdAt})`, cutoff)))
    .limit(limit);
  return rows.map((r) => r.databaseId);
}

/**
 * Records a running export as `ready`. False when no row changed: the export was failed (its
 * deadline passed) or its database deleted meanwhile; the caller must then remove the archive.
 */
export async function markExportReady(env: Env, ref: ExportRef, archive: { size: number; sha256: string }, now: number): Promise<boolean> {
  const updated = await database(env)
    .update(exports)
    .set({ status: "ready", finishedAt: now, sizeBytes: archive.size, sha256: archive.sha256, failureReason: null, progress: null })
    .where(and(byRef(ref), eq(exports.status, "running")))
    .returning({ id: exports.id });
  forgetExport(ref);
  return updated.length === 1;
}

/**
 * Marks a pending or running export `failed` (its link answers 404 from now on; the gate lets a
 * new export start at once) and deletes whatever objects it left in R2. False when it was not in
 * flight. The record is written first: it is what the download reads; the objects are owed work.
 */
export async function markExportFailed(env: Env, ref: ExportRef, reason: string, now: number): Promise<boolean> {
  const failed = await database(env)
    .update(exports)
    .set({ status: "failed", finishedAt: now, failureReason: reason.slice(0, MAX_REASON_CHARS), progress: null })
    .where(and(byRef(ref), inArray(exports.status, IN_FLIGHT_STATUSES)))
    .returning({ id: exports.id });
  forgetExport(ref);
  if (failed.length === 0) return false;
  await deleteObjects(env, exportObjectKeys(ref), now);
  return true;
}

/** A subquery for `exists`: the export whose id is in `exportId` (a column of the outer query), if in flight. */
export function inFlightExportNamed(env: Env, exportId: SQLiteColumn) {
  return database(env)
    .select({ id: exports.id })
    .from(exports)
    .where(and(eq(exports.id, exportId), inArray(exports.status, IN_FLIGHT_STATUSES)));
}

/** In-flight exports past their deadline at `now`, oldest deadline first. */
export function overdueExports(env: Env, now: number, limit = STORE_BATCH): Promise<ExportRef[]> {
  return database(env)
    .select({ exportId: exports.id, databaseId: exports.databaseId })
    .from(exports)
    .where(and(inArray(exports.status, IN_FLIGHT_STATUSES), lte(exports.deadlineAt, now)))
    .orderBy(exports.deadlineAt)
    .limit(limit);
}

/** Ready exports that became ready at or before `cutoff` (Unix ms). */
export function readyExportsBefore(env: Env, cutoff: number, limit = STORE_BATCH): Promise<ExportRef[]> {
  return database(env)
    .select({ exportId: exports.id, databaseId: exports.databaseId })
    .from(exports)
    .where(and(eq(exports.status, "ready"), lte(exports.finishedAt, cutoff)))
    .limit(limit);
}

/** Records ready exports as `expired` (their objects are already gone). */
export async function markExpired(env: Env, exportIds: string[]): Promise<void> {
  await database(env)
    .update(exports)
    .set({ status: "expired" })
    .where(and(inArray(exports.id, exportIds), eq(exports.status, "ready")));
  const expired = new Set(exportIds);
  downloadRecords.forget((key) => expired.has(key.slice(key.indexOf("/") + 1)));
}

/**
 * Deletes a database's record (its export records go with it, by the foreign key) and every
 * object its exports left in R2. The deletions are recorded as owed in the same D1 batch as the
 * record's removal, so an R2 failure half way leaves them to the sweep, never forgotten.
 */
export async function deleteDatabaseAndArchives(env: Env, databaseId: string, now: number): Promise<void> {
  const db = database(env);
  const refs = await db.select({ exportId: exports.id }).from(exports).where(eq(exports.databaseId, databaseId));
  const work = owedDeletions(refs.flatMap((r) => exportObjectKeys({ databaseId, exportId: r.exportId })));
  await db.batch([deleteDatabaseQuery(env, databaseId), ...insertOwed(env, work, now)]);
  downloadRecords.forget((key) => key.startsWith(`${databaseId}/`));
  await settle(env, work);
}
