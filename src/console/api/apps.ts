import { type Context, Hono } from "hono";
import { appController } from "../../apps/app-controller";
import { readDeployLog } from "../../apps/deploy-log";
import { createApp } from "../../apps/service";
import { AppSettingsPatch, NewAppRequest, PlanRequest } from "../../apps/settings";
import { type AppRow, getDeploy, getOwnedApp, latestDeploy, listApps, listDeploys } from "../../apps/store";
import { viewApp, viewDeploy } from "../../apps/views";
import { servingInstance } from "../../apps/instance-state";
import { planChangeBlocked } from "../../domains/service";
import type { AppEnv } from "../../http/context";
import { ApiError, type ErrorCode, invalid, notFound } from "../../http/errors";
import { readJson } from "../../http/validate";
import { repositoryProblem } from "../../source/forge";
import { searchLogs, streamDeployLog, streamLogs } from "./logs";

async function view(c: Context<AppEnv>, row: AppRow) {
  const [latest, instance] = await Promise.all([latestDeploy(c.env, row.id), servingInstance(c.env, row, c.get("deps").now())]);
  return viewApp(row, latest, c.get("config").APPS_DOMAIN, c.req.url, instance);
}


/** The address rule of source fetches under this Worker's ALLOW_LOCAL_SOURCES, checked when the address is saved. */
function checkSource(c: Context<AppEnv>, repository: string | undefined): void {
  const problem = repository === undefined ? null : repositoryProblem(repository, { allowLocal: c.get("config").ALLOW_LOCAL_SOURCES });
  if (problem) throw invalid(`repository: ${problem}`);
}

/** A refusal from the controller, as the envelope. */
function refused(result: { code: string; message: string }): never {
  throw new ApiError(result.code as ErrorCode, result.message);
}

/** Runs a control through the app's controller and answers with the app as it is afterwards. */
async function control(c: Context<AppEnv>, run: (app: AppRow, now: number) => Promise<{ outcome: string; code?: string; message?: string }>) {
  const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id")!);
  const result = await run(app, c.get("deps").now());
  if (result.outcome === "refused") refused(result as { code: string; message: string });
  return c.json(await view(c, await getOwnedApp(c.env, c.get("accountId")!, app.id)));
}

/**
 * The console's JSON routes for apps (`/console/api/apps`). Every change to an app goes through
 * its AppController; these routes check ownership (another account's app answers 404 like a
 * missing one) and shape the replies.
 */
export const appRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    const rows = await listApps(c.env, c.get("accountId")!);
    return c.json({ apps: await Promise.all(rows.map((row) => view(c, row))) });
  })
  .post("/", async (c) => {
    const input = await readJson(c, NewAppRequest);
    checkSource(c, input.repository);
    const { now, uuid } = c.get("deps");
    const created = await createApp(c.env, { ...input, accountId: c.get("accountId")!, id: uuid(), now: now() });
    if (!created.ok) throw invalid(`${created.field}: ${created.message}`);
    return c.json(await view(c, created.app), 201);
  })
  .get("/:id", async (c) => c.json(await view(c, await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id")))))
  .patch("/:id", async (c) => {
    const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id"));
    const input = await readJson(c, AppSettingsPatch);
    checkSource(c, input.repository);
    const saved = await appController(c.env, app.id).changeSettings({ appId: app.id, settings: input, now: c.get("deps").now() });
    if ("outcome" in saved) refused(saved);
    else if (!saved.ok) throw invalid(`${saved.field}: ${saved.message}`);
    return c.json(await view(c, await getOwnedApp(c.env, c.get("accountId")!, app.id)));
  })
  .delete("/:id", async (c) => {
    const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id"));
    const result = await appController(c.env, app.id).delete({ appId: app.id, now: c.get("deps").now() });
    if (result.outcome === "refused") refused(result);
    return c.json({ success: true });
  })
  .post("/:id/deploy", async (c) => {
    const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id"));
    const { now, uuid } = c.get("deps");
    const result = await appController(c.env, app.id).deploy({ appId: app.id, deployId: uuid(), now: now() });
    if (result.outcome === "refused") refused(result);
    const deploy = await getDeploy(c.env, app.id, result.deployId);
    return c.json({ deploy: deploy ? viewDeploy(deploy, app) : { id: result.deployId, status: "building" } }, 202);
  })
  .post("/:id/stop", (c) => control(c, (app, now) => appController(c.env, app.id).stop({ appId: app.id, now })))
  .post("/:id/start", (c) => control(c, (app, now) => appController(c.env, app.id).start({ appId: app.id, now })))
  .post("/:id/restart", (c) => control(c, (app, now) => appController(c.env, app.id).restart({ appId: app.id, now })))
  .post("/:id/plan", async (c) => {
    const { plan } = await readJson(c, PlanRequest);
    return control(c, async (app, now) => (await planChangeBlocked(c.env, app.id, plan)) ?? appController(c.env, app.id).changePlan({ appId: app.id, plan, now }));
  })
  .get("/:id/logs", searchLogs)
  .get("/:id/logs/stream", streamLogs)
  .get("/:id/deploys", async (c) => {
    const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id"));
    return c.json({ deploys: (await listDeploys(c.env, app.id)).map((deploy) => viewDeploy(deploy, app)) });
  })
  .post("/:id/deploys/:deployId/rollback", async (c) => {
    const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id"));
    const target = await getDeploy(c.env, app.id, c.req.param("deployId"));
    if (!target) throw notFound("No deploy with this id exists for this app.");
    const { now, uuid } = c.get("deps");
    const result = await appController(c.env, app.id).rollback({ appId: app.id, targetId: target.id, deployId: uuid(), now: now() });
    if (result.outcome === "refused") refused(result);
    const [deploy, current] = await Promise.all([getDeploy(c.env, app.id, result.deployId), getOwnedApp(c.env, c.get("accountId")!, app.id)]);
    return c.json({ deploy: deploy ? viewDeploy(deploy, current) : { id: result.deployId, status: "starting" } }, 202);
  })
  .get("/:id/deploys/:deployId/log/stream", streamDeployLog)
  .get("/:id/deploys/:deployId/log", async (c) => {
    const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id"));
    const deploy = await getDeploy(c.env, app.id, c.req.param("deployId"));
    if (!deploy) throw notFound("No deploy with this id exists for this app.");
    return c.body(await readDeployLog(c.env.LOGS, app.id, deploy.id), 200, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
  });
