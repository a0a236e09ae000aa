import { Hono } from "hono";
import { PLANS, type PlanId } from "../../apps/plans";
import { AppSettingsRequest, HealthCheckForm, NewAppRequest, PlanRequest } from "../../apps/settings";
import type { AppRow } from "../../apps/store";
import type { AppEnv } from "../../http/context";
import { type EngineControl, changePlan, createNewApp, deleteApp, listAppViews, runControl, saveSettings } from "../actions/apps";
import { callerOf } from "../actions/caller";
import { deployWithLog, rollBack, startDeploy } from "../actions/deploys";
import type { Outcome } from "../actions/outcome";
import { AppListPage, NewAppPage } from "./app-list";
import { OverviewPage } from "./app-page";
import { type Page, appPath, ownedApp, renderSettings, saveSettingsForm, viewOf } from "./app-tab-pages";
import { DeleteAppPage } from "./app-controls";
import { DeployLogPage } from "./deploy-panel";
import { setFlash, takeFlash } from "./flash";
import { type FieldErrors, readForm } from "./forms";
import { loadViewer, render } from "./layout";

/** Where the Settings tab's forms lead back to. */
const settingsPath = (id: string) => `${appPath(id)}/settings`;

/** The sentence after a control was done (docs/apps.md, App controls). */
const CONTROL_DONE: Record<EngineControl, (app: AppRow) => string> = {
  stop: () => "App stopped. Its settings are kept; press Start to bring it back.",
  start: (app) => `App started on the ${PLANS[app.plan as PlanId]?.label ?? app.plan} plan.`,
  restart: () => "App restarted from the same image.",
};

/** Back to the app page with what happened: the notice when it was done, the controller's sentence when it was refused. */
async function backToApp(c: Page, app: AppRow, outcome: Outcome, done: string) {
  await setFlash(c, outcome.ok ? { notice: done } : { error: outcome.message });
  return c.redirect(appPath(app.id), 303);
}

/** Stop, Start or Restart, pressed on the Overview. */
async function controlPressed(c: Page, control: EngineControl) {
  const app = await ownedApp(c);
  return backToApp(c, app, await runControl(callerOf(c), app, control), CONTROL_DONE[control](app));
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
    const apps = await listAppViews(callerOf(c));
    return render(c, <AppListPage viewer={await loadViewer(c)} apps={apps} flash={flash} />);
  })
  .get("/new", async (c) => render(c, <NewAppPage viewer={await loadViewer(c)} appsDomain={c.get("config").APPS_DOMAIN} />))
  .post("/", async (c) => {
    const form = await readForm(c, NewAppRequest);
    const appsDomain = c.get("config").APPS_DOMAIN;
    if (!form.ok) {
      return render(c, <NewAppPage viewer={await loadViewer(c)} appsDomain={appsDomain} values={form.values} errors={placeErrors(form.errors)} />, 400);
    }
    const created = await createNewApp(callerOf(c), form.data);
    if (!created.ok) {
      const errors = { [created.field ?? "_form"]: created.message };
      return render(c, <NewAppPage viewer={await loadViewer(c)} appsDomain={appsDomain} values={form.values} errors={errors} />, created.code === "CONFLICT" ? 409 : 400);
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
    return saveSettingsForm(c, row, form.data, { values: form.values, notice: "Settings saved. The next deploy uses them.", back: settingsPath(row.id) });
  })
  .post("/:id/health-check", async (c) => {
    const row = await ownedApp(c);
    const form = await readForm(c, HealthCheckForm);
    if (!form.ok) return renderSettings(c, row, { healthForm: { values: form.values, errors: form.errors } }, 400);
    const notice = "Health check saved. The next check and the next deploy use it.";
    return saveSettingsForm(c, row, { health_check: form.data }, { values: form.values, notice, back: `${settingsPath(row.id)}#health-check` });
  })
  .post("/:id/deploy", async (c) => {
    const app = await ownedApp(c);
    const deployed = await startDeploy(callerOf(c), app);
    // docs/apps.md, App controls: pressing Deploy while a deploy runs does nothing visible, so no message either.
    if (!deployed.ok) await setFlash(c, { error: deployed.message });
    else if (deployed.started) await setFlash(c, { notice: `Deploy started from branch ${app.branch}. Its log is under Deploys.` });
    return c.redirect(appPath(app.id), 303);
  })
  .post("/:id/stop", (c) => controlPressed(c, "stop"))
  .post("/:id/start", (c) => controlPressed(c, "start"))
  .post("/:id/restart", (c) => controlPressed(c, "restart"))
  .post("/:id/plan", async (c) => {
    const form = await readForm(c, PlanRequest);
    const app = await ownedApp(c);
    if (!form.ok) {
      await setFlash(c, { error: form.errors.plan ?? "Choose a plan." });
      return c.redirect(appPath(app.id), 303);
    }
    const { plan } = form.data;
    if (app.plan === plan) {
      await setFlash(c, { notice: `The app is already on the ${PLANS[plan].label} plan. Nothing changed.` });
      return c.redirect(appPath(app.id), 303);
    }
    return backToApp(c, app, await changePlan(callerOf(c), app, plan), planChanged(app, plan));
  })
  .get("/:id/delete", async (c) => {
    const row = await ownedApp(c);
    return render(c, <DeleteAppPage viewer={await loadViewer(c)} app={await viewOf(c, row)} />);
  })
  .post("/:id/delete", async (c) => {
    const app = await ownedApp(c);
    const deleted = await deleteApp(callerOf(c), app);
    if (!deleted.ok) return backToApp(c, app, deleted, "");
    await setFlash(c, { notice: `App “${app.name}” deleted. Its address no longer answers.` });
    return c.redirect("/console/apps", 303);
  })
  .post("/:id/deploys/:deployId/rollback", async (c) => {
    const app = await ownedApp(c);
    const rolled = await rollBack(callerOf(c), app, c.req.param("deployId"));
    const target = rolled.ok ? rolled.target.id.slice(0, 8) : "";
    const notice = app.status === "stopped" ? `The app will run deploy ${target} again when started.` : `Rolling back to deploy ${target}: no rebuild. Its log is under Deploys.`;
    return backToApp(c, app, rolled, notice);
  })
  .get("/:id/deploys/:deployId", async (c) => {
    const flash = await takeFlash(c);
    const row = await ownedApp(c);
    const { deploy, log } = await deployWithLog(callerOf(c), row, c.req.param("deployId"));
    return render(c, <DeployLogPage viewer={await loadViewer(c)} app={await viewOf(c, row)} deploy={deploy} log={log} flash={flash} />);
  });
