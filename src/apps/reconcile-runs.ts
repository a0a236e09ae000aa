/**
 * The reconciler's runs (the only module naming the `reconcile_runs` table): one row per run, over
 * the whole engine or one app, for the operator's runtime report. A D1 row rather than a Durable
 * Object's storage: runs start from the cron, from an operator route and from any app's
 * controller, and the report reads them beside the retire ledger in one place; only the most
 * recent KEPT_RUNS are kept.
 */
import { desc, eq, lt } from "drizzle-orm";
import { database } from "../db/client";
import { type ReconcileRunAction, reconcileRuns } from "../db/schema";

/** Runs kept; older ones are deleted as new ones are written. */
export const KEPT_RUNS = 50;
/** Actions kept per run (a run that did more says how many in its counts). */
export const KEPT_ACTIONS = 50;

export type ReconcileRun = typeof reconcileRuns.$inferSelect;
export type { ReconcileRunAction };

export async function recordReconcileRun(env: Env, run: Omit<ReconcileRun, "id">): Promise<void> {
  const db = database(env);
  await db.insert(reconcileRuns).values({ ...run, id: crypto.randomUUID(), actions: run.actions.slice(0, KEPT_ACTIONS) });
  const cutoff = await db.select({ at: reconcileRuns.startedAt }).from(reconcileRuns).orderBy(desc(reconcileRuns.startedAt)).limit(1).offset(KEPT_RUNS - 1).get();
  if (cutoff) await db.delete(reconcileRuns).where(lt(reconcileRuns.startedAt, cutoff.at));
}

/** The latest run, or the latest of one scope (`engine`, or an app id). */
export async function lastReconcileRun(env: Env, scope?: string): Promise<ReconcileRun | undefined> {
  return database(env)
    .select()
    .from(reconcileRuns)
    .where(scope === undefined ? undefined : eq(reconcileRuns.scope, scope))
    .orderBy(desc(reconcileRuns.startedAt))
    .limit(1)
    .get();
}
