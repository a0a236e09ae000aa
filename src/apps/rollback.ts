import { billingStateOf } from "../billing/app-billing";
import { renewIfDue } from "./paid-changes";
import { launchEnv } from "../envvars/store";
import { describeError, log } from "../http/log";
import type { ContainerRuntime, Instance } from "../runtime/types";
import type { Refusal } from "./controls";
import { DeployLog, deployLogPrefix } from "./deploy-log";

import { appLogs } from "../logs/app-logs";
import { secretsToMask } from "../logs/mask";
import { ROLLBACK_CURRENT_MESSAGE, ROLLBACK_UNAVAILABLE_MESSAGE, imagesToKeep, planRollback, rollbackAvailable } from "./history";
import type { SwitchOutcome } from "./launch";
import { relaunch } from "./relaunch";
import { imageHistory, insertRollbackDeploy, markImagesRemoved } from "./deploy-store";
import { type AppRow, type DeployRow, deployById, getApp } from "./store";

/**
 * Rollback's work, run by the AppController with the app's deploy mark held (a rollback is a
 * deploy of kind `rollback`: Deploy pressed meanwhile, Delete and the other controls are answered
 * as during a deploy). No rebuild and no charge: the earlier deploy's image runs again with the
 * app's current variables, through the same relaunch as a deploy.
 */

export type RollbackRefusal = Refusal | { outcome: "refused"; code: "ROLLBACK_UNAVAILABLE"; message: string };
export type RollbackResult = { outcome: "started"; deployId: string } | RollbackRefusal;

const unavailable = (message = ROLLBACK_UNAVAILABLE_MESSAGE): RollbackRefusal => ({ outcome: "refused", code: "ROLLBACK_UNAVAILABLE", message });

/** What the controller does next: run the switch in the background, or record a stopped app's new image. */
export type PreparedRollback = { plan: "switch" | "repoint"; app: AppRow; deploy: DeployRow; log: DeployLog };

/**
 * Checks the rollback against the app as it is now and records its deploy (`starting`), or
 * refuses it: the target is the live deploy or its image is gone (ROLLBACK_UNAVAILABLE), the app
 * never went live, or a running app's ended period could not be renewed (src/apps/history.ts
 * planRollback).
 */
export async function prepareRollback(env: Env, input: { app: AppRow; targetId: string; deployId: string; now: number; runtime: ContainerRuntime }): Promise<PreparedRollback | RollbackRefusal> {
  let app = input.app;
  const target = await deployById(env, input.targetId);
  if (!target || target.appId !== app.id) return unavailable();
  if (target.id === app.liveDeployId) return unavailable(ROLLBACK_CURRENT_MESSAGE);
  if (!rollbackAvailable(target, app.liveDeployId) || !target.image || target.port === null) return unavailable();
  if (!(await input.runtime.hasImage(target.image))) {
    // Removed behind the records' back: no deploy that ran it can be rolled back to.
    await markImagesRemoved(env, app.id, [target.image]);
    return unavailable();
  }
  let plan = planRollback({ status: app.status, billing: billingStateOf(app) }, input.now);
  if (plan === "renew_first") {
    // Never run unpaid: the renewal that is due is settled first (charged, or the app stopped).
    await renewIfDue(env, app.id, input.now, input.runtime);
    app = (await getApp(env, app.id)) ?? app;
    plan = planRollback({ status: app.status, billing: billingStateOf(app) }, input.now);
  }
  if (plan === "refused") return { outcome: "refused", code: "INVALID_STATE", message: "The app has never gone live, so there is nothing to roll back to. Deploy it first." };
  if (plan === "renew_first") return { outcome: "refused", code: "INSUFFICIENT_FUNDS", message: "The app's paid period has ended and could not be renewed. Top up the wallet, then try again." };
  const deploy = await insertRollbackDeploy(env, { id: input.deployId, from: target, now: input.now });
  const deployLog = new DeployLog(env.LOGS, deployLogPrefix(app.id, deploy.id), Date.now);
  deployLog.mask(secretsToMask(Object.values((await launchEnv(env, app.id)).env)));
  const commit = target.commitSha ? `, commit ${target.commitSha.slice(0, 12)}` : "";
  await deployLog.step(`Rollback to deploy ${target.id.slice(0, 8)} (image ${target.image}${commit}): no rebuild`);
  return { plan, app, deploy, log: deployLog };
}

/** The controller's switch and failure steps, as a deploy job calls them. */
export interface RollbackSteps {
  complete(input: { deployId: string; instance: Instance | null; replaces: string | null; envVersion: number; now: number }): Promise<SwitchOutcome>;
  fail(input: { deployId: string; failure: { kind: string; message: string }; now: number }): Promise<void>;
}

/** A stopped app stays stopped: the earlier image becomes the one Start runs (and Start bills as it does). */
export async function repointStopped(prepared: PreparedRollback, steps: RollbackSteps, now: number): Promise<void> {
  const { app, deploy, log: deployLog } = prepared;
  const done = await steps.complete({ deployId: deploy.id, instance: null, replaces: app.instanceId, envVersion: app.envAppliedVersion, now });
  if (done.switched) await deployLog.step("The app is stopped, so nothing was started. Press Start to run this version.");
  else await steps.fail({ deployId: deploy.id, failure: { kind: "interrupted", message: `The rollback was not recorded: ${done.reason}` }, now });
  await deployLog.flush().catch(() => undefined);
}

/** A running app moves to a new instance of the earlier image, as a deploy's switch; a failed launch leaves the old one serving. */
export async function switchRunning(env: Env, runtime: ContainerRuntime, prepared: PreparedRollback, steps: RollbackSteps): Promise<void> {
  const { app, deploy, log: deployLog } = prepared;
  const fields = { app_id: app.id, deploy_id: deploy.id };
  const fail = async (failure: { kind: string; message: string }) => {
    await deployLog.step(`Rollback failed: ${failure.message}`);
    await steps.fail({ deployId: deploy.id, failure, now: Date.now() });
  };
  try {
    const outcome = await relaunch(env, runtime, app, {
      image: { image: deploy.image!, port: deploy.port!, portReason: deploy.portReason ?? "", deployId: deploy.id },
      log: (text) => deployLog.append(text),
      afterSwitch: () => deployLog.flush(),
      switchTo: (instance, { envVersion }) => steps.complete({ deployId: deploy.id, instance, replaces: app.instanceId, envVersion, now: Date.now() }),
    });
    if (!outcome.ok) await fail({ kind: outcome.kind === "not_switched" ? "interrupted" : outcome.kind, message: outcome.message });
    // The app's output is kept from now on (src/logs/app-logs.ts), as after a deploy.
    else await appLogs(env, app.id).watch(app.id).catch(() => undefined);
    log("info", outcome.ok ? "rollback live" : "rollback failed", fields);
  } catch (err) {
    log("error", "rollback failed on our side", { ...fields, ...describeError(err) });
    await fail({ kind: "interrupted", message: "The rollback failed on our side and could not be finished. Try again." }).catch(() => undefined);
  } finally {
    await deployLog.flush().catch(() => undefined);
  }
}

/**
 * After a switch: the images of the app's last live deploys are kept (src/apps/history.ts), every
 * older one is removed from the engine and its deploys no longer offer a rollback.
 */
export async function pruneImages(env: Env, appId: string, runtime: ContainerRuntime): Promise<void> {
  const { remove } = imagesToKeep(await imageHistory(env, appId));
  const removed: string[] = [];
  for (const image of remove) {
    try {
      await runtime.removeImage(image);
      removed.push(image);
    } catch (err) {
      log("warn", "old image not removed", { app_id: appId, image, ...describeError(err) });
    }
  }
  await markImagesRemoved(env, appId, removed);
}
