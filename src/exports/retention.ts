import { and, eq, inArray, lte } from "drizzle-orm";
import { database } from "../db/client";
import { exports } from "../db/schema";
import { archiveKey } from "../databases/service";
import { log } from "../http/log";

/**
 * Archive retention (SPEC.md, export state `expired`): an archive is kept for
 * ARCHIVE_RETENTION_SECONDS from the moment its export became ready.
 */

/** D1 binds at most 100 parameters per query: a group of ids plus the new and old status fit in one. */
export const SWEEP_BATCH = 98;
/** Groups per cron run; what is left waits for the next run (the download already answers 410). */
export const SWEEP_MAX_BATCHES = 50;

/** Whether an archive that became ready at `readyAt` (Unix ms) is past retention at `now`. */
export function isPastRetention(readyAt: number, retentionSeconds: number, now: number): boolean {
  return now >= readyAt + retentionSeconds * 1000;
}

/**
 * The cron side of retention: ready exports past retention become `expired` and their objects
 * are deleted. Objects go first, so a failed delete leaves the record ready for the next run
 * rather than an expired record over a forgotten object. Returns how many expired.
 */
export async function sweepExpiredArchives(env: Env, retentionSeconds: number, now: number): Promise<number> {
  const db = database(env);
  const cutoff = now - retentionSeconds * 1000;
  let expired = 0;
  for (let batch = 0; batch < SWEEP_MAX_BATCHES; batch++) {
    const due = await db
      .select({ id: exports.id, databaseId: exports.databaseId })
      .from(exports)
      .where(and(eq(exports.status, "ready"), lte(exports.finishedAt, cutoff)))
      .limit(SWEEP_BATCH);
    if (due.length === 0) break;
    await env.ARCHIVES.delete(due.map((e) => archiveKey(e.databaseId, e.id)));
    await db
      .update(exports)
      .set({ status: "expired" })
      .where(and(inArray(exports.id, due.map((e) => e.id)), eq(exports.status, "ready")));
    expired += due.length;
    if (due.length < SWEEP_BATCH) break;
  }
  if (expired > 0) log("info", "archives expired", { count: expired });
  return expired;
}
