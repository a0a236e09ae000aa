/**
 * The reconciler: on the Worker's cron, once as `npm start` comes up (POST /admin/api/reconcile),
 * and for one app after a deploy of it failed (AppController.failDeploy), the engine's objects are compared with the records
 * (src/apps/reconcile-plan.ts). Each app's part runs in its AppController under the change mark
 * (`AppController.reconcile`), which also finishes a change whose runner died with the object;
 * objects of an app with no record that a port row of ours names are removed here. Each run is
 * recorded for the operator's runtime report (src/apps/reconcile-runs.ts).
 */
import { describeError, log } from "../http/log";
import { runtimeFor } from "../runtime";
import { appController } from "./app-controller";
import { carryOut } from "./reconcile-app";
import { appsWithActions, countActions, planReconcile } from "./reconcile-plan";
import { type ReconcileRun, type ReconcileRunAction, recordReconcileRun } from "./reconcile-runs";
import { engineView, reconcileGraceMs, recordsView } from "./reconcile-view";

export type ReconcileSummary = Omit<ReconcileRun, "id">;

/** What one app's controller answers (AppController.reconcile). */
export type AppReconcileResult = { outcome: "busy" } | { outcome: "done"; actions: ReconcileRunAction[] };

/** The whole engine against every record; null when no engine is configured. */
export async function reconcileEngine(env: Env, now: number): Promise<ReconcileSummary | null> {
  const runtime = runtimeFor(env);
  if (!runtime) return null;
  let looked;
  try {
    const [engine, records] = await Promise.all([engineView(env, runtime), recordsView(env)]);
    looked = engine && { engine, records };
  } catch (err) {
    log("warn", "reconciler could not read the engine", describeError(err));
    return finish(env, { scope: "engine", startedAt: now, actions: [], extra: { busy: 0, foreign: 0 }, error: err instanceof Error ? err.message : String(err) });
  }
  if (!looked) return null;
  const plan = planReconcile(looked.engine, looked.records, now, reconcileGraceMs(env));
  const known = new Set(looked.records.apps.map((a) => a.id));
  const actions: ReconcileRunAction[] = [];
  // No controller answers for an app without a record: its objects a port row of ours names go here.
  for (const action of plan.actions.filter((a) => !known.has(a.appId))) actions.push(await carryOut(env, runtime, action, null));
  // Every app's controller is asked (a dead change's mark is found only there); the engine is
  // looked at again only for apps the plan found something for.
  const look = new Set(appsWithActions(plan));
  let busy = 0;
  for (const appId of known) {
    const result = await askController(env, appId, now, look.has(appId));
    if (result.outcome === "busy") busy++;
    else actions.push(...result.actions);
  }
  return finish(env, { scope: "engine", startedAt: now, actions, extra: { busy, foreign: plan.foreign }, error: null });
}

/** One app: its objects and its records, under its mark. */
export async function reconcileOneApp(env: Env, appId: string, now: number): Promise<ReconcileSummary> {
  return recordAppRun(env, appId, now, await askController(env, appId, now, true));
}

/** Records one app's run (its scope is the app id) as its controller answered it. */
export function recordAppRun(env: Env, appId: string, startedAt: number, result: AppReconcileResult): Promise<ReconcileSummary> {
  return finish(env, { scope: appId, startedAt, actions: result.outcome === "done" ? result.actions : [], extra: { busy: result.outcome === "busy" ? 1 : 0, foreign: 0 }, error: null });
}

async function askController(env: Env, appId: string, now: number, look: boolean): Promise<AppReconcileResult> {
  try {
    return await appController(env, appId).reconcile({ appId, now, look });
  } catch (err) {
    log("warn", "reconciler could not reconcile an app", { app_id: appId, ...describeError(err) });
    return { outcome: "done", actions: [{ app_id: appId, action: "reconcile", object: appId, outcome: "failed" }] };
  }
}

async function finish(env: Env, run: { scope: string; startedAt: number; actions: ReconcileRunAction[]; extra: { busy: number; foreign: number }; error: string | null }): Promise<ReconcileSummary> {
  const counts = { ...countActions(run.actions), ...run.extra };
  const summary: ReconcileSummary = { scope: run.scope, startedAt: run.startedAt, finishedAt: Date.now(), counts, actions: run.actions, error: run.error };
  await recordReconcileRun(env, summary);
  return summary;
}
