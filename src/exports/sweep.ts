import { describeError, log } from "../http/log";
import { settleOwedWork } from "./cleanup";
import { exportGate } from "./export-gate";
import { sweepExpiredArchives } from "./retention";
import { RUNNER_SILENCE_MS } from "./runner-watch";
import { databasesWithSilentExports, inFlightExportNamed, markExportFailed, overdueExports } from "./store";

/** Overdue exports failed per cron run; the gate fails its own database's at once anyway. */
export const OVERDUE_MAX_PER_RUN = 500;

/**
 * Fails every in-flight export past its deadline (a crash between the record and the queue
 * message, a lost message, a dead-letter consumer that threw): its link answers 404, its objects
 * are deleted and a new export of its database can start. Returns how many failed.
 */
export async function failOverdueExports(env: Env, now: number): Promise<number> {
  let failed = 0;
  while (failed < OVERDUE_MAX_PER_RUN) {
    const due = await overdueExports(env, now);
    if (due.length === 0) break;
    let changed = 0;
    for (const ref of due) {
      if (await markExportFailed(env, ref, "the export passed its deadline without finishing", now)) changed++;
    }
    failed += changed;
    if (changed === 0) break;
  }
  if (failed > 0) log("warn", "overdue exports failed", { count: failed });
  return failed;
}

/**
 * Asks the gate of each database whose export in flight has a silent runner to look at it now: a
 * backstop for a gate whose alarm was lost (or an export older than the watch). Returns how many.
 */
export async function wakeSilentExports(env: Env, now: number): Promise<number> {
  const databases = await databasesWithSilentExports(env, now - RUNNER_SILENCE_MS);
  for (const databaseId of databases) await exportGate(env, databaseId).watch(databaseId, now);
  if (databases.length > 0) log("info", "gates of silent exports woken", { count: databases.length });
  return databases.length;
}

/**
 * The periodic sweep (cron): overdue exports fail, silent runners are looked at, archives past
 * retention expire, and owed R2 cleanup is retried. Each step runs even when another throws; the
 * first error is rethrown so the run shows as failed.
 */
export async function runSweep(env: Env, now: number, retentionSeconds: number): Promise<void> {
  const steps = [
    () => failOverdueExports(env, now),
    () => wakeSilentExports(env, now),
    () => sweepExpiredArchives(env, retentionSeconds, now),
    () => settleOwedWork(env, inFlightExportNamed),
  ];
  let first: unknown;
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      log("error", "sweep step failed", describeError(err));
      first ??= err;
    }
  }
  if (first !== undefined) throw first;
}
