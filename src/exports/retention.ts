import { log } from "../http/log";
import { archiveKey, markExpired, readyExportsBefore, STORE_BATCH } from "./store";

/**
 * Archive retention (docs/api.md, export rule 5: 410 past retention): an archive is kept for
 * ARCHIVE_RETENTION_SECONDS from the moment its export became ready.
 */

/** Groups per cron run; what is left waits for the next run (the download already answers 410). */
export const SWEEP_MAX_BATCHES = 50;

/**
 * The cron side of retention: ready exports past retention become `expired` and their objects
 * are deleted. Objects go first, so a failed delete leaves the record ready for the next run
 * rather than an expired record over a forgotten object. Returns how many expired.
 */
export async function sweepExpiredArchives(env: Env, retentionSeconds: number, now: number): Promise<number> {
  const cutoff = now - retentionSeconds * 1000;
  let expired = 0;
  for (let batch = 0; batch < SWEEP_MAX_BATCHES; batch++) {
    const due = await readyExportsBefore(env, cutoff);
    if (due.length === 0) break;
    await env.ARCHIVES.delete(due.map((e) => archiveKey(e.databaseId, e.exportId)));
    await markExpired(
      env,
      due.map((e) => e.exportId),
    );
    expired += due.length;
    if (due.length < STORE_BATCH) break;
  }
  if (expired > 0) log("info", "archives expired", { count: expired });
  return expired;
}
