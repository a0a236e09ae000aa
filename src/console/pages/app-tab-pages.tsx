import { type Context, Hono } from "hono";
import type { AppRow } from "../../apps/store";
import type { AppView } from "../../apps/views";
import { addRefusal } from "../../domains/refusals";
import { expiryNotes } from "../../domains/service";
import type { AppEnv } from "../../http/context";
import { type AppSettings, appView, ownedApp as ownedAppOf, saveSettings } from "../actions/apps";
import { callerOf } from "../actions/caller";
import { deployViews } from "../actions/deploys";
import { listDomains } from "../actions/domains";
import { readVariables } from "../actions/env";
import { DeploysPage, DomainsPage, EnvironmentPage, LogsPage, type SettingsForms, SettingsPage, type TabBase } from "./app-tab-views";
import type { EnvPasteForm, EnvRowsForm } from "./env-section";
import { setFlash, takeFlash } from "./flash";
import { loadViewer, render } from "./layout";
import { logsSectionProps } from "./logs-section";

export type Page = Context<AppEnv>;
type Status = 200 | 400 | 403 | 409;

export const appPath = (id: string) => `/console/apps/${id}`;

/** The signed-in viewer's app (another account's answers 404 like a missing one). */
export const ownedApp = (c: Page): Promise<AppRow> => ownedAppOf(callerOf(c), c.req.param("id")!);

/** The app as its pages show it; `withInstance` also asks the engine how the serving instance is (the Overview and the list). */
export const viewOf = (c: Page, row: AppRow, withInstance = true): Promise<AppView> => appView(callerOf(c), row, withInstance);

/** What every tab starts from; the flash is taken only by a page a redirect led to (a GET). */
async function tabBase(c: Page, row: AppRow): Promise<TabBase> {
  const flash = c.req.method === "GET" ? await takeFlash(c) : null;
  return { viewer: await loadViewer(c), app: await viewOf(c, row, false), flash };
}

/** The Environment tab: the variables as saved, or the forms as typed with their messages. */
export async function renderEnvironment(c: Page, row: AppRow, form: { rows?: EnvRowsForm; paste?: EnvPasteForm } = {}, status: Status = 200) {
  const saved = form.rows ? null : await readVariables(callerOf(c), row);
  const rows = form.rows ?? { version: saved?.version ?? 0, rows: saved?.variables ?? [] };
  return render(c, <EnvironmentPage {...await tabBase(c, row)} rows={rows} paste={form.paste} />, status);
}

/** The Domains tab, with the add form as typed and its error when there is one. */
export async function renderDomains(c: Page, row: AppRow, form: { hostname?: string; error?: string } = {}, status: Status = 200) {
  const config = c.get("config");
  // Why a domain cannot be added now (plan, app not running), said before anyone tries.
  const blocked = addRefusal({ appStatus: row.status, plan: row.plan, domainCount: 0, hostnameTaken: false });
  const domains = {
    domains: await listDomains(callerOf(c), row),
    provider: config.HOSTNAME_PROVIDER,
    recheckSeconds: config.DOMAIN_RECHECK_SECONDS,
    expired: await expiryNotes(c.env, row.id, c.get("deps").now()),
    blocked: blocked?.message ?? null,
    ...form,
  };
  return render(c, <DomainsPage {...await tabBase(c, row)} domains={domains} />, status);
}

/** The Settings tab, with one of its forms as typed (or a webhook secret just made). */
export async function renderSettings(c: Page, row: AppRow, forms: SettingsForms = {}, status: Status = 200) {
  const base = await tabBase(c, row);
  return render(c, <SettingsPage {...base} {...forms} subdomainFixed={row.firstDeployAt !== null} appsDomain={c.get("config").APPS_DOMAIN} />, status);
}

/**
 * Saves a form of the Settings tab through the app's controller: its field's refusal is shown
 * under the field (a taken or fixed subdomain 409, a refused repository 400), the controller's
 * refusal (CHANGE_IN_FLIGHT, ...) and the notice come back as a flash.
 */
export async function saveSettingsForm(c: Page, row: AppRow, settings: AppSettings, form: { values: Record<string, string>; notice: string; back: string }) {
  const saved = await saveSettings(callerOf(c), row, settings);
  if (!saved.ok && saved.field) return renderSettings(c, row, { values: form.values, errors: { [saved.field]: saved.message } }, saved.code === "CONFLICT" ? 409 : 400);
  await setFlash(c, saved.ok ? { notice: form.notice } : { error: saved.message });
  return c.redirect(form.back, 303);
}

/**
 * The app's tabs besides Overview (in app-pages) and Metrics (in metrics-page), under
 * /console/apps: plain pages, so every one works without script and has its own URL.
 */
export const appTabPages = new Hono<AppEnv>()
  .get("/:id/deploys", async (c) => {
    const row = await ownedApp(c);
    const deploys = await deployViews(callerOf(c), row);
    return render(c, <DeploysPage {...await tabBase(c, row)} deploys={deploys} />);
  })
  .get("/:id/logs", async (c) => {
    const row = await ownedApp(c);
    return render(c, <LogsPage {...await tabBase(c, row)} logs={await logsSectionProps(c, row.id)} />);
  })
  .get("/:id/environment", async (c) => renderEnvironment(c, await ownedApp(c)))
  .get("/:id/domains", async (c) => renderDomains(c, await ownedApp(c)))
  .get("/:id/settings", async (c) => renderSettings(c, await ownedApp(c)));
