import { appController } from "../../apps/app-controller";
import { readDeployLog } from "../../apps/deploy-log";
import { type AppRow, type DeployRow, getDeploy, listDeploys } from "../../apps/store";
import { type DeployView, viewDeploy } from "../../apps/views";
import type { ErrorCode } from "../../http/errors";
import { notFound } from "../../http/errors";
import { ownedApp } from "./apps";
import type { Caller } from "./caller";
import { type Outcome, refuse } from "./outcome";

/**
 * An app's deploys, for the console's JSON routes (api/apps.ts) and its pages alike: Deploy,
 * Rollback, the history and a deploy's log. Deploy and Rollback go through the app's AppController.
 */

export const NO_SUCH_DEPLOY = "No deploy with this id exists for this app.";

/** A deploy as the reply shows it right after it was asked for (the record may not be readable yet). */
export type StartedDeploy = DeployView | { id: string; status: "building" | "starting" };

/** The app's deploys, newest first. */
export async function deployViews(caller: Caller, app: AppRow): Promise<DeployView[]> {
  return (await listDeploys(caller.env, app.id)).map((deploy) => viewDeploy(deploy, app));
}

/** One of the app's deploys (404 NOT_FOUND when it has none with this id). */
export async function ownedDeploy(caller: Caller, app: AppRow, deployId: string): Promise<DeployRow> {
  const deploy = await getDeploy(caller.env, app.id, deployId);
  if (!deploy) throw notFound(NO_SUCH_DEPLOY);
  return deploy;
}

/** A deploy with its whole log. */
export async function deployWithLog(caller: Caller, app: AppRow, deployId: string): Promise<{ deploy: DeployView; log: string }> {
  const deploy = await ownedDeploy(caller, app, deployId);
  return { deploy: viewDeploy(deploy, app), log: await readDeployLog(caller.env.LOGS, app.id, deploy.id) };
}

/**
 * Deploy: builds the branch and starts the app. `started` is false when a deploy was already
 * running (pressing Deploy then does nothing, docs/apps.md, App controls).
 */
export async function startDeploy(caller: Caller, app: AppRow): Promise<Outcome<{ deploy: StartedDeploy; started: boolean }>> {
  const result = await appController(caller.env, app.id).deploy({ appId: app.id, deployId: caller.deps.uuid(), now: caller.deps.now() });
  if (result.outcome === "refused") return refuse(result.code as ErrorCode, result.message);
  const deploy = await getDeploy(caller.env, app.id, result.deployId);
  return { ok: true, deploy: deploy ? viewDeploy(deploy, app) : { id: result.deployId, status: "building" }, started: result.outcome === "started" };
}

/** Rollback: runs an earlier deploy's image again, with no rebuild (404 when the app has no such deploy). */
export async function rollBack(caller: Caller, app: AppRow, targetId: string): Promise<Outcome<{ deploy: StartedDeploy; target: DeployRow }>> {
  const target = await ownedDeploy(caller, app, targetId);
  const result = await appController(caller.env, app.id).rollback({ appId: app.id, targetId: target.id, deployId: caller.deps.uuid(), now: caller.deps.now() });
  if (result.outcome === "refused") return refuse(result.code as ErrorCode, result.message);
  const [deploy, current] = await Promise.all([getDeploy(caller.env, app.id, result.deployId), ownedApp(caller, app.id)]);
  return { ok: true, deploy: deploy ? viewDeploy(deploy, current) : { id: result.deployId, status: "starting" }, target };
}
