/**
 * The retire step: drains an app's retire ledger (src/apps/retire-ledger.ts), run by its
 * controller's alarm, never by a promise kept in memory. A row whose drain deadline has passed is
 * retired: its instance is stopped with the grace period and removed (the runtime's port table
 * frees its host port with the removal, src/runtime/ports.ts), the app's images no kept deploy
 * needs are removed (src/apps/rollback.ts pruneImages), and the row is deleted. Every step is
 * idempotent: an instance already gone counts as removed, so a retirement cut short by a restart
 * simply runs again. An engine that does not answer keeps the row, its attempt counted, for the
 * next alarm.
 *
 * The drain is bounded by DRAIN_SECONDS, not by a count of the old instance's requests: the proxy
 * runs in every isolate of the Worker, and none of them can know that no other one still has a
 * request on the old instance, so no count it keeps is one the retire step could trust.
 */
import { describeError, log } from "../http/log";
import { type ContainerRuntime, RuntimeUnavailableError } from "../runtime/types";
import { type RetireRow, deleteRetireRow, noteRetireAttempt, retireRowsOf } from "./retire-ledger";
import { pruneImages } from "./rollback";
import { getApp } from "./store";

/** After an attempt the engine did not answer, the next one waits this long. */
export const RETIRE_RETRY_MS = 30_000;

export interface RetireRun {
  /** Rows whose instance is gone now, their rows deleted. */
  retired: number;
  /** Rows kept because the engine did not answer (tried again at the next alarm). */
  failed: number;
  /** Rows still draining. */
  waiting: number;
}

/** When the app's next retirement is due: its earliest drain deadline, not before `retryAt` (after a failed attempt). Null: no row. */
export function retireDueAt(rows: readonly Pick<RetireRow, "drainUntil">[], retryAt: number | null): number | null {
  if (rows.length === 0) return null;
  const earliest = Math.min(...rows.map((r) => r.drainUntil));
  return retryAt === null ? earliest : Math.max(earliest, retryAt);
}

/** Retires every row of the app whose drain deadline is at or before `now`. */
export async function drainRetireLedger(env: Env, appId: string, runtime: ContainerRuntime | null, now: number, graceSeconds: number): Promise<RetireRun> {
  const rows = await retireRowsOf(env, appId);
  const run: RetireRun = { retired: 0, failed: 0, waiting: 0 };
  const due = rows.filter((row) => row.drainUntil <= now);
  run.waiting = rows.length - due.length;
  if (due.length === 0) return run;
  const app = await getApp(env, appId);
  for (const row of due) {
    // The app runs it again (an in-place generation, or a record put back): it is not removed.
    if (app?.instanceId === row.instanceId) {
      await deleteRetireRow(env, row.instanceId, appId);
      continue;
    }
    if (!runtime || !(await retireInstance(runtime, row, graceSeconds))) {
      await noteRetireAttempt(env, row.instanceId);
      run.failed++;
      continue;
    }
    await deleteRetireRow(env, row.instanceId, appId);
    run.retired++;
    log("info", "replaced instance retired", { app_id: appId, instance_id: row.instanceId, attempts: row.attempts });
  }
  // Its image goes when no kept deploy needs it (the keep rule of src/apps/history.ts).
  if (run.retired > 0 && runtime && app) await pruneImages(env, appId, runtime).catch((err: unknown) => log("warn", "images not pruned", { app_id: appId, ...describeError(err) }));
  return run;
}

/** Stops (grace period for one that served) and removes the instance; true once it is gone. */
async function retireInstance(runtime: ContainerRuntime, row: RetireRow, graceSeconds: number): Promise<boolean> {
  try {
    await runtime.remove(row.instanceId, { graceSeconds: row.serving ? graceSeconds : 0 });
    return true;
  } catch (err) {
    log("warn", "replaced instance not retired; kept for the next alarm", { app_id: row.appId, instance_id: row.instanceId, attempts: row.attempts + 1, unavailable: err instanceof RuntimeUnavailableError, ...describeError(err) });
    return false;
  }
}
