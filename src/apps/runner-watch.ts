/**
 * What the app controller's alarm does about the change in flight (src/apps/heartbeat.ts): a
 * deploy job on the queue that fell silent is handed to a new runner once or failed; work the
 * object ran itself (a variable switch, a rollback's switch, Stop, Start, Change plan, Delete...)
 * whose incarnation is gone was lost with it and is ended now (a Delete is run again to its end).
 * Either way an instance the dead runner had started and not switched to is removed, and the old
 * instance keeps serving.
 */
import { describeError, log } from "../http/log";
import { envApplyLost } from "./env-apply";
import { type ContainerRuntime } from "../runtime/types";
import type { InFlightRecord } from "./controls";
import { DeployLog, deployLogPrefix } from "./deploy-log";
import { deployStep, runnerDeadMessage, runnerVerdict } from "./heartbeat";
import { APP_ID_LABEL } from "./launch";
import type { DeployJobMessage } from "./messages";
import { retireRowsOf } from "./retire-ledger";
import { handDeployToNewRunner } from "./deploy-store";
import { DEPLOY_RUNNING, deployById, getApp } from "./store";

/** A rollback's switch runs in the controller: lost with it, it is failed with this sentence. */
export const ROLLBACK_LOST_MESSAGE = "The rollback stopped when the control plane restarted; the app still runs the version it ran before. Press Rollback to try again.";

/** What the watch may do with the controller. */
export interface RunnerWatch {
  env: Env;
  /** The controller's incarnation now. */
  incarnation: string;
  runtime: ContainerRuntime | null;
  /** Writes the mark again (a requeue counted on it). */
  remark(record: InFlightRecord): void;
  clear(record: InFlightRecord): void;
  failDeploy(input: { deployId: string; failure: { kind: string; message: string }; now: number }): Promise<void>;
  /** Runs a Delete lost with a restart to its end (its mark and the object's storage go with it). */
  finishDelete(appId: string): Promise<void>;
}

/** Looks at the change in flight at `now`; ends or hands it on when its runner is dead. */
export async function watchRunner(watch: RunnerWatch, current: InFlightRecord, appId: string, now: number): Promise<void> {
  if (current.runner !== undefined) {
    if (current.runner !== watch.incarnation) await lostInObject(watch, current, appId, now);
    return;
  }
  if (current.kind !== "deploy" || !current.deployId) return;
  const deploy = await deployById(watch.env, current.deployId);
  // The deploy ended (its switch or failure landed) but the mark outlived it: nothing runs.
  if (!deploy || !DEPLOY_RUNNING.includes(deploy.status)) return void watch.clear(current);
  const step = deployStep(deploy.status as "building" | "starting");
  const lastSignAt = Math.max(deploy.runnerAliveAt ?? 0, deploy.buildAliveAt ?? 0, deploy.startedAt, current.since);
  const verdict = runnerVerdict({ lastSignAt, step, requeues: current.requeues ?? 0, now });
  if (verdict === "alive") return;
  const fields = { app_id: appId, deploy_id: deploy.id, step, silent_ms: now - lastSignAt };
  await removeStrays(watch, appId);
  const deployLog = new DeployLog(watch.env.LOGS, deployLogPrefix(appId, deploy.id), () => now);
  if (verdict === "requeue") {
    if (!(await handDeployToNewRunner(watch.env, deploy.id, now))) return void watch.clear(current);
    // Counted before it is sent: a requeue is never repeated, even if this alarm is cut short.
    watch.remark({ ...current, requeues: (current.requeues ?? 0) + 1 });
    await deployLog.step(`The deploy's runner stopped answering ${step === "build" ? "during the build" : "while starting the new instance"}; a new runner takes it over`);
    await deployLog.flush().catch(() => undefined);
    await watch.env.DEPLOY_JOBS.send({ appId, deployId: deploy.id } satisfies DeployJobMessage);
    log("warn", "deploy runner silent; its job was handed to a new runner", fields);
    return;
  }
  const message = runnerDeadMessage(step);
  await deployLog.step(`Deploy failed: ${message}`);
  await deployLog.flush().catch(() => undefined);
  await watch.failDeploy({ deployId: deploy.id, failure: { kind: "interrupted", message }, now });
  log("warn", "deploy runner silent; deploy failed", fields);
}

/** Work the object ran itself and lost when it was restarted: recorded as failed where it shows, its mark cleared. */
async function lostInObject(watch: RunnerWatch, current: InFlightRecord, appId: string, now: number): Promise<void> {
  log("warn", "change lost with a restart of the app's controller", { app_id: appId, kind: current.kind, deploy_id: current.deployId });
  if (current.kind === "delete") return watch.finishDelete(appId);
  await removeStrays(watch, appId);
  if (current.kind === "env") await envApplyLost(watch.env, appId, now);
  if (current.kind === "deploy" && current.deployId) {
    const deploy = await deployById(watch.env, current.deployId);
    if (deploy && DEPLOY_RUNNING.includes(deploy.status)) {
      const deployLog = new DeployLog(watch.env.LOGS, deployLogPrefix(appId, deploy.id), () => now);
      await deployLog.step(`Rollback failed: ${ROLLBACK_LOST_MESSAGE}`);
      await deployLog.flush().catch(() => undefined);
      await watch.failDeploy({ deployId: deploy.id, failure: { kind: "interrupted", message: ROLLBACK_LOST_MESSAGE }, now });
    }
  }
  watch.clear(current);
}

/**
 * Instances of the app that neither its record nor its retire ledger names: started by a runner
 * that died before its switch. Called only while the dead change's mark is held, so no live change
 * of the app can own one. An engine that does not answer leaves them to the reconciler.
 */
async function removeStrays(watch: RunnerWatch, appId: string): Promise<void> {
  const runtime = watch.runtime;
  if (!runtime) return;
  try {
    const [running, app, rows] = await Promise.all([runtime.instances({ [APP_ID_LABEL]: appId }), getApp(watch.env, appId), retireRowsOf(watch.env, appId)]);
    const explained = new Set([app?.instanceId, ...rows.map((r) => r.instanceId)]);
    for (const id of running) {
      if (explained.has(id)) continue;
      await runtime.remove(id);
      log("info", "instance of a dead runner removed", { app_id: appId, instance_id: id });
    }
  } catch (err) {
    log("warn", "instances of a dead runner not removed", { app_id: appId, ...describeError(err) });
  }
}
