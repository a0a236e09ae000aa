import { type SQL, inArray, isNull, notExists, or, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { database } from "../db/client";
import { r2Cleanup } from "../db/schema";
import { describeError, log } from "../http/log";

/**
 * R2 work that is owed: objects to delete and multipart uploads to abort. Each piece is written to
 * D1 (`r2_cleanup`) before it is tried and removed once it is done, so an R2 error or a crash half
 * way only delays it until the next sweep; it is never forgotten.
 */

/** Rows settled per sweep run; what is left waits for the next run. */
export const CLEANUP_BATCH = 200;
/** D1 binds at most 100 parameters per query; a row binds six. */
const ROWS_PER_INSERT = 16;

/** One piece of owed work. */
export interface OwedWork {
  id: string;
  key: string;
  /** Set for a multipart upload to abort; null for an object to delete. */
  uploadId: string | null;
  exportId: string | null;
}

/** New rows for objects to delete; insert them (e.g. in the batch that makes them owed), then `settle`. */
export function owedDeletions(keys: string[]): OwedWork[] {
  return keys.map((key) => ({ id: crypto.randomUUID(), key, uploadId: null, exportId: null }));
}

/** The insert statements for `work`, in groups D1 accepts; for `db.batch` next to other writes. */
export function insertOwed(env: Env, work: OwedWork[], now: number) {
  const db = database(env);
  const groups = [];
  for (let i = 0; i < work.length; i += ROWS_PER_INSERT) {
    groups.push(db.insert(r2Cleanup).values(work.slice(i, i + ROWS_PER_INSERT).map((w) => ({ ...w, createdAt: now }))));
  }
  return groups;
}

/** Records then does the deletion of `keys`; what fails stays owed for the sweep. */
export async function deleteObjects(env: Env, keys: string[], now: number): Promise<void> {
  if (keys.length === 0) return;
  const work = owedDeletions(keys);
  for (const insert of insertOwed(env, work, now)) await insert.run();
  await settle(env, work);
}

/**
 * Records a multipart upload of an export's job as owed an abort, until `done` is called (the
 * upload completed or was aborted). The sweep aborts it only once the export is no longer in flight.
 */
export async function trackUpload(env: Env, upload: { key: string; uploadId: string; exportId: string }, now: number) {
  const id = crypto.randomUUID();
  await database(env).insert(r2Cleanup).values({ id, ...upload, createdAt: now });
  return { id, done: () => untrack(env, [id]) };
}

/**
 * Records an object an export's job is about to write as owed a deletion: the job deletes it once
 * it is used up (`settle`), and the sweep does once the export is no longer in flight.
 */
export async function trackObject(env: Env, object: { key: string; exportId: string }, now: number): Promise<OwedWork> {
  const work = { id: crypto.randomUUID(), key: object.key, uploadId: null, exportId: object.exportId };
  await database(env).insert(r2Cleanup).values({ ...work, createdAt: now });
  return work;
}

/** Forgets tracked work that is no longer owed (an upload that completed). */
export async function untrack(env: Env, ids: string[]): Promise<void> {
  if (ids.length > 0) await database(env).delete(r2Cleanup).where(inArray(r2Cleanup.id, ids));
}

/** Does each piece of work; removes the rows that are done, counts a try on the others. */
export async function settle(env: Env, work: OwedWork[]): Promise<number> {
  const done: string[] = [];
  for (const item of work) {
    try {
      if (item.uploadId === null) await env.ARCHIVES.delete(item.key);
      else await abortUpload(env.ARCHIVES, item.key, item.uploadId);
      done.push(item.id);
    } catch (err) {
      log("warn", "R2 cleanup failed; the sweep retries it", { key: item.key, ...describeError(err) });
    }
  }
  const db = database(env);
  if (done.length > 0) await db.delete(r2Cleanup).where(inArray(r2Cleanup.id, done));
  const failed = work.filter((w) => !done.includes(w.id)).map((w) => w.id);
  // Counted for operators; a row is retried however often it failed.
  if (failed.length > 0) await db.update(r2Cleanup).set({ attempts: sql`${r2Cleanup.attempts} + 1` }).where(inArray(r2Cleanup.id, failed));
  return done.length;
}

/**
 * The sweep's part: settles owed work, except uploads of exports still in flight. `inFlightNamed`
 * is the exports owner's query of an in-flight export with the id in a column (src/exports/store.ts
 * inFlightExportNamed), passed in so that this module does not import the store that imports it.
 */
export async function settleOwedWork(env: Env, inFlightNamed: (env: Env, exportId: SQLiteColumn) => SQL | Parameters<typeof notExists>[0]): Promise<number> {
  const inFlight = inFlightNamed(env, r2Cleanup.exportId);
  const due = await database(env)
    .select({ id: r2Cleanup.id, key: r2Cleanup.key, uploadId: r2Cleanup.uploadId, exportId: r2Cleanup.exportId })
    .from(r2Cleanup)
    .where(or(isNull(r2Cleanup.exportId), notExists(inFlight)))
    .orderBy(r2Cleanup.createdAt)
    .limit(CLEANUP_BATCH);
  const settled = due.length > 0 ? await settle(env, due) : 0;
  if (settled > 0) log("info", "owed R2 cleanup done", { count: settled });
  return settled;
}

/** Aborts an upload; one that no longer exists (completed or aborted before) counts as done. */
async function abortUpload(bucket: R2Bucket, key: string, uploadId: string): Promise<void> {
  try {
    await bucket.resumeMultipartUpload(key, uploadId).abort();
  } catch (err) {
    if (!/NoSuchUpload|not ?found|does not exist/i.test(String((err as Error)?.message ?? err))) throw err;
  }
}
