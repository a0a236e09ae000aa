import { Hono } from "hono";
import { appController } from "../../apps/app-controller";
import { readDeployLog } from "../../apps/deploy-log";
import { PLANS, type PlanId } from "../../apps/plans";
import { createApp } from "../../apps/service";
import { AppSettingsRequest, HealthCheckForm, NewAppRequest, PlanRequest } from "../../apps/settings";
import { type AppRow, getDeploy, listApps } from "../../apps/store";
import { viewDeploy } from "../../apps/views";
import { planChangeBlocked } from "../../domains/service";
import type { AppEnv } from "../../http/context";
import { notFound } from "../../http/errors";
import { AppListPage, NewAppPage } from "./app-list";
import { OverviewPage } from "./app-page";
import { type Page, appPath, ownedApp, renderSettings, viewOf } from "./app-tab-pages";
import { DeleteAppPage } from "./app-controls";
import { DeployLogPage } from "./deploy-panel";
import { type Flash, setFlash, takeFlash } from "./flash";
import { type FieldErrors, readForm } from "./forms";
import { loadViewer, render } from "./layout";

/** A controller's answer, as the pages read it. */
type ControlAnswer = { outcome: string; message?: string };

/** Where the Settings tab's forms lead back to. */
const settingsPath = (id: string) => `${appPath(id)}/settings`;

/**
 * Runs a control through the app's controller (the one place changes to an app are serialised)
 * and goes back to the app page: the notice when it was done, the controller's sentence when it
 * was refused (CHANGE_IN_FLIGHT, INVALID_STATE, ...).
 */
async function runControl(c: Page, run: (app: AppRow, now: number) => Promise<ControlAnswer>, done: (app: AppRow) => string) {
  const app = await ownedApp(c);
  const result = await run(app, c.get("deps").now());
  const flash: Flash = result.outcome === "refused" ? { error: result.message ?? "The change was refused." } : { notice: done(app) };
  await setFlash(c, flash);
  return c.redirect(appPath(app.id), 303);
}

function planChanged(app: AppRow, plan: PlanId): string {
  const label = PLANS[plan].label;
  if (app.status === "running") return `Plan changed to ${label}. The app restarted with the new limits.`;
  if (app.status === "not_deployed" || app.status === "failed") return `Plan changed to ${label}. Its limits apply from the first deploy.`;
  return `Plan changed to ${label}. The new limits apply when the app starts.`;
}

/** The settings form's errors as the page shows them: under the field when there is one. */
const SETTINGS_FIELDS = new Set(["name", "repository", "branch", "root_directory", "dockerfile_path", "subdomain", "plan"]);
function placeErrors(errors: FieldErrors): FieldErrors {
  const placed: FieldErrors = {};
  for (const [field, message] of Object.entries(errors)) {
    const key = SETTINGS_FIELDS.has(field) ? field : "_form";
    placed[key] ??= message;
  }
  return placed;
}

/**
 * The app pages under /console/apps: the list, New app, an app's Overview with its controls, the
 * Settings tab's forms, Delete with its confirmation, and a deploy's log (the other tabs are in
 * app-tab-pages). Plain forms, each answered with a
 * redirect and a flash, so everything works without script.
 */
export const appPages = new Hono<AppEnv>()
  .get("/", async (c) => {
    const flash = await takeFlash(c);
    const rows = await listApps(c.env, c.get("accountId")!);
    const apps = await Promise.all(rows.map((row) => viewOf(c, row)));
    return render(c, <AppListPage viewer={await loadViewer(c)} apps={apps} flash={flash} />);
  })
  .get("/new", async (c) => render(c, <NewAppPage viewer={await loadViewer(c)} appsDomain={c.get("config").APPS_DOMAIN} />))
  .post("/", async (c) => {
    const form = await readForm(c, NewAppRequest);
    const appsDomain = c.get("config").APPS_DOMAIN;
    if (!form.ok) {
      return render(c, <NewAppPage viewer={await loadViewer(c)} appsDomain={appsDomain} values={form.values} errors={placeErrors(form.errors)} />, 400);
    }
    const { now, uuid } = c.get("deps");
    const created = await createApp(c.env, { ...form.data, accountId: c.get("accountId")!, id: uuid(), now: now() });
    if (!created.ok) {
      return render(c, <NewAppPage viewer={await loadViewer(c)} appsDomain={appsDomain} values={form.values} errors={{ [created.field]: created.message }} />, 409);
    }
    await setFlash(c, { notice: `App “${created.app.name}” created. Press Deploy to build it from branch ${created.app.branch}.` });
    return c.redirect(appPath(created.app.id), 303);
  })
  .get("/:id", async (c) => {
    // A log search made when the logs were on this page: the Logs tab answers it now.
    const search = new URL(c.req.url).search;
    if (["q", "since", "until"].some((name) => c.req.query(name) !== undefined)) return c.redirect(`${appPath(c.req.param("id"))}/logs${search}`, 303);
    const flash = await takeFlash(c);
    const row = await ownedApp(c);
    return render(c, <OverviewPage viewer={await loadViewer(c)} app={await viewOf(c, row)} flash={flash} />);
  })
  .post("/:id/settings", async (c) => {
    const row = await ownedApp(c);
    const form = await readForm(c, AppSettingsRequest);
    if (!form.ok) return renderSettings(c, row, { values: form.values, errors: placeErrors(form.errors) }, 400);
    const saved = await appController(c.env, row.id).changeSettings({ appId: row.id, settings: form.data, now: c.get("deps").now() });
    if ("outcome" in saved) {
      await setFlash(c, { error: saved.message });
      return c.redirect(settingsPath(row.id), 303);
    }
    if (!saved.ok) return renderSettings(c, row, { values: form.values, errors: { [saved.field]: saved.message } }, 409);
    await setFlash(c, { notice: "Settings saved. The next deploy uses them." });
    return c.redirect(settingsPath(row.id), 303);
  })
  .post("/:id/health-check", async (c) => {
    const row = await ownedApp(c);
    const form = await readForm(c, HealthCheckForm);
    if (!form.ok) return renderSettings(c, row, { healthForm: { values: form.values, errors: form.errors } }, 400);
    const saved = await appController(c.env, row.id).changeSettings({ appId: row.id, settings: { health_check: form.data }, now: c.get("deps").now() });
    await setFlash(c, "outcome" in saved ? { error: saved.message } : { notice: "Health check saved. The next check and the next deploy use it." });
    return c.redirect(`${settingsPath(row.id)}#health-check`, 303);
  })
  .post("/:id/deploy", async (c) => {
    const app = await ownedApp(c);
    const { now, uuid } = c.get("deps");
    const result = await appController(c.env, app.id).deploy({ appId: app.id, deployId: uuid(), now: now() });
    // docs/apps.md, App controls: pressing Deploy while a deploy runs does nothing visible, so no message either.
    if (result.outcome === "refused") await setFlash(c, { error: result.message });
    else if (result.outcome === "started") await setFlash(c, { notice: `Deploy started from branch ${app.branch}. Its log is under Deploys.` });
    return c.redirect(appPath(app.id), 303);
  })
  .post("/:id/stop", (c) =>
    runControl(c, (app, now) => appController(c.env, app.id).stop({ appId: app.id, now }), () => "App stopped. Its settings are kept; press Start to bring it back."),
  )
  .post("/:id/start", (c) =>
    runControl(c, (app, now) => appController(c.env, app.id).start({ appId: app.id, now }), (app) => `App started on the ${PLANS[app.plan as PlanId]?.label ?? app.plan} plan.`),
  )
  .post("/:id/restart", (c) =>
    runControl(c, (app, now) => appController(c.env, app.id).restart({ appId: app.id, now }), () => "App restarted from the same image."),
  )
  .post("/:id/plan", async (c) => {
    const form = await readForm(c, PlanRequest);
    if (!form.ok) {
      const app = await ownedApp(c);
      await setFlash(c, { error: form.errors.plan ?? "Choose a plan." });
      return c.redirect(appPath(app.id), 303);
    }
    const { plan } = form.data;
    const current = await ownedApp(c);
    if (current.plan === plan) {
      await setFlash(c, { notice: `The app is already on the ${PLANS[plan].label} plan. Nothing changed.` });
      return c.redirect(appPath(current.id), 303);
    }
    return runControl(
      c,
      async (app, now) => (await planChangeBlocked(c.env, app.id, plan)) ?? appController(c.env, app.id).changePlan({ appId: app.id, plan, now }),
      (app) => planChanged(app, plan),
    );
  })
  .get("/:id/delete", async (c) => {
    const row = await ownedApp(c);
    return render(c, <DeleteAppPage viewer={await loadViewer(c)} app={await viewOf(c, row)} />);
  })
  .post("/:id/delete", async (c) => {
    const app = await ownedApp(c);
    const result = await appController(c.env, app.id).delete({ appId: app.id, now: c.get("deps").now() });
    if (result.outcome === "refused") {
      await setFlash(c, { error: result.message });
      return c.redirect(appPath(app.id), 303);
    }
    await setFlash(c, { notice: `App “${app.name}” deleted. Its address no longer answers.` });
    return c.redirect("/console/apps", 303);
  })
  .post("/:id/deploys/:deployId/rollback", async (c) => {
    const app = await ownedApp(c);
    const target = await getDeploy(c.env, app.id, c.req.param("deployId"));
    if (!target) throw notFound("No deploy with this id exists for this app.");
    const { now, uuid } = c.get("deps");
    const result = await appController(c.env, app.id).rollback({ appId: app.id, targetId: target.id, deployId: uuid(), now: now() });
    const notice = app.status === "stopped" ? `The app will run deploy ${target.id.slice(0, 8)} again when started.` : `Rolling back to deploy ${target.id.slice(0, 8)}: no rebuild. Its log is under Deploys.`;
    await setFlash(c, result.outcome === "refused" ? { error: result.message } : { notice });
    return c.redirect(appPath(app.id), 303);
  })
  .get("/:id/deploys/:deployId", async (c) => {
    const flash = await takeFlash(c);
    const row = await ownedApp(c);
    const deploy = await getDeploy(c.env, row.id, c.req.param("deployId"));
    if (!deploy) throw notFound("No deploy with this id exists for this app.");
    const log = await readDeployLog(c.env.LOGS, row.id, deploy.id);
    return render(c, <DeployLogPage viewer={await loadViewer(c)} app={await viewOf(c, row)} deploy={viewDeploy(deploy, row)} log={log} flash={flash} />);
  });
