import { startRefusal, stopColumns } from "../billing/app-events";
import { planChangeBlocked } from "../domains/service";
import { log } from "../http/log";
import type { ContainerRuntime } from "../runtime/types";
import { instanceColumns, recordPlan, recordRestart, recordStop, switchInstance } from "./app-columns";
import { type ControlResult, NOT_CURRENT, NO_ENGINE, type Refusal, refusal } from "./controls";
import { healthSettings, stepHealth } from "./health";
import { recordStart } from "./paid-changes";
import type { PlanId } from "./plans";
import { type Change, relaunch } from "./relaunch";
import { type AppRow, getApp } from "./store";

/**
 * The work of the controls that act on the engine (docs/apps.md, App controls), run by the app's
 * AppController with its change mark held; every new instance comes through `relaunch`.
 */

/** What the controller lends a control: its engine, and its alarm to set again once a switch left a row to retire. */
export interface ChangeHost {
  env: Env;
  runtime: ContainerRuntime;
  reschedule: () => Promise<void>;
}

const DONE: ControlResult = { outcome: "done" };

/** Stop: the app goes offline, settings kept; billing rule 3's stopped clock starts. */
export async function stopApp(host: ChangeHost, app: AppRow, now: number): Promise<ControlResult> {
  if (app.instanceId) await host.runtime.stop(app.instanceId);
  await recordStop(host.env, app.id, stopColumns(app, now));
  return DONE;
}

/** Start: the app returns on its current plan, as a new instance of its live image (the last one built). */
export async function startApp(host: ChangeHost, app: AppRow, now: number): Promise<ControlResult> {
  // Billing rule 4 (or a fresh month once the period has ended): refused before anything runs.
  const affordable = await startRefusal(host.env, app, now);
  if (!affordable.ok) return refusal(affordable);
  let refused: Refusal | null = null;
  const result = await relaunchControl(host, app, {
    switchTo: async (instance, { envVersion, retire }) => {
      const billed = await recordStart(host.env, app, now, { ...instanceColumns(instance), envAppliedVersion: envVersion }, retire);
      if (billed === "not_switched") return { switched: false, reason: NOT_CURRENT };
      if (!billed.ok) return (refused = refusal(billed)), { switched: false, reason: billed.message };
      return { switched: true, replaced: { instanceId: app.instanceId, image: null, serving: false } };
    },
  });
  return refused ?? result;
}

/** Restart: the same instance restarted in place, no rebuild. */
export async function restartApp(host: ChangeHost, app: AppRow, now: number): Promise<ControlResult> {
  if (!app.instanceId) return { outcome: "refused", code: "INVALID_STATE", message: "The app has no instance to restart." };
  // An instance gone from the engine (removed by a Delete cut short, or by hand) comes back as a
  // new instance of the live image, as the reconciler would bring it back.
  if ((await host.runtime.inspect(app.instanceId)) === null) {
    return (await restoreRunning(host, app.id, now)) ? DONE : { outcome: "refused", code: "LAUNCH_FAILED", message: "The app's instance was gone and a new one did not start. Try again in a moment." };
  }
  const instance = await host.runtime.restart(app.instanceId);
  // The health check's grace period begins again with the restarted process.
  await recordRestart(host.env, app.id, instance, stepHealth(app.health, { kind: "restarted", now }, healthSettings(app.healthCheck).graceSeconds).record);
  return DONE;
}

/**
 * Change plan: refused while the app has custom domains the plan does not allow (docs/domains.md);
 * a running app moves to a new instance with the plan's limits; any other only records the plan.
 */
export async function changeAppPlan(host: Omit<ChangeHost, "runtime"> & { runtime: ContainerRuntime | null }, app: AppRow, plan: PlanId): Promise<ControlResult> {
  const blocked = await planChangeBlocked(host.env, app.id, plan);
  if (blocked) return blocked;
  if (app.status !== "running" || !app.image) {
    await recordPlan(host.env, app.id, plan);
    return DONE;
  }
  if (!host.runtime) return NO_ENGINE;
  return relaunchControl({ ...host, runtime: host.runtime }, app, {
    plan,
    switchTo: async (instance, { envVersion, retire }) =>
      (await switchInstance(host.env, app, { plan, ...instanceColumns(instance), envAppliedVersion: envVersion }, app.instanceId, { retire }))
        ? { switched: true, replaced: { instanceId: app.instanceId, image: null, serving: true } }
        : { switched: false, reason: NOT_CURRENT },
  });
}

/** A running app whose instance is gone gets a new one of its live image, billing untouched; false when it did not start. */
export async function restoreRunning(host: ChangeHost, appId: string, now: number): Promise<boolean> {
  const app = await getApp(host.env, appId);
  if (app?.status !== "running") return false;
  const health = stepHealth(app.health, { kind: "restarted", now }, healthSettings(app.healthCheck).graceSeconds).record;
  const result = await relaunchControl(host, app, {
    // Nothing to retire: the instance it replaces is gone.
    switchTo: async (instance, { envVersion }) =>
      (await switchInstance(host.env, app, { ...instanceColumns(instance), envAppliedVersion: envVersion, health }, app.instanceId))
        ? { switched: true, replaced: { instanceId: null, image: null, serving: false } }
        : { switched: false, reason: NOT_CURRENT },
  });
  return result.outcome === "done";
}

/** A new instance through the one relaunch, as a control's answer; the control answers at the switch and the alarm drains the old one. */
async function relaunchControl(host: ChangeHost, app: AppRow, change: Change): Promise<ControlResult> {
  const outcome = await relaunch(host.env, host.runtime, app, change);
  if (outcome.ok) {
    await host.reschedule();
    return DONE;
  }
  if (outcome.kind === "no_image") return { outcome: "refused", code: "INVALID_STATE", message: outcome.message };
  log("warn", "instance launch failed", { app_id: app.id, kind: outcome.kind });
  return { outcome: "refused", code: "LAUNCH_FAILED", message: outcome.message };
}
