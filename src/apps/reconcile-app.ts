/**
 * The reconciler's work on one app, run by its AppController with the app's change mark held (so
 * no change to the app is in flight inside it): the app's objects on the engine are compared with
 * its records again, as they are now, and each action is carried out and logged with the app id.
 */
import { getConfig } from "../config";
import { database } from "../db/client";
import { describeError, log } from "../http/log";
import { engineKey, freePort } from "../runtime/ports";
import type { ContainerRuntime } from "../runtime/types";
import type { ReconcileRunAction } from "./reconcile-runs";
import { type ReconcileAction, planReconcile } from "./reconcile-plan";
import { engineView, reconcileGraceMs, recordsView } from "./reconcile-view";

/** Brings the app's instance back through the one launch path; false when it could not. */
export type Restore = () => Promise<boolean>;

/** Compares the app's objects with its records at `now` and carries out what the plan says. */
export async function reconcileAppObjects(env: Env, runtime: ContainerRuntime, appId: string, now: number, restore: Restore): Promise<ReconcileRunAction[]> {
  const [engine, records] = await Promise.all([engineView(env, runtime, appId), recordsView(env, appId)]);
  const plan = planReconcile(engine, records, now, reconcileGraceMs(env));
  const done: ReconcileRunAction[] = [];
  for (const action of plan.actions) done.push(await carryOut(env, runtime, action, restore));
  return done;
}

/** One action, logged with its app id; a failure is logged and recorded, and the next run tries again. */
export async function carryOut(env: Env, runtime: ContainerRuntime, action: ReconcileAction, restore: Restore | null): Promise<ReconcileRunAction> {
  const object = objectOf(action);
  const record = (outcome: "done" | "failed"): ReconcileRunAction => ({ app_id: action.appId, action: action.kind, object, outcome });
  try {
    const ok = await perform(env, runtime, action, restore);
    log(ok ? "info" : "warn", ok ? "reconciler acted" : "reconciler could not act", { app_id: action.appId, action: action.kind, object });
    return record(ok ? "done" : "failed");
  } catch (err) {
    log("warn", "reconciler could not act", { app_id: action.appId, action: action.kind, object, ...describeError(err) });
    return record("failed");
  }
}

async function perform(env: Env, runtime: ContainerRuntime, action: ReconcileAction, restore: Restore | null): Promise<boolean> {
  const config = getConfig(env);
  switch (action.kind) {
    case "remove_instance":
      await runtime.remove(action.id, { graceSeconds: config.STOP_GRACE_SECONDS });
      return true;
    case "free_port":
      await freePort(database(env), engineKey(config.RUNTIME_URL), action.port);
      return true;
    case "remove_image":
      await runtime.removeImage(action.image);
      return true;
    case "restore":
      return restore !== null && (await restore());
  }
}

function objectOf(action: ReconcileAction): string {
  switch (action.kind) {
    case "remove_instance":
      return action.id;
    case "free_port":
      return String(action.port);
    case "remove_image":
      return action.image;
    case "restore":
      return action.instanceId ?? "";
  }
}
