import { Hono } from "hono";
import { appController } from "../../apps/app-controller";
import { type AppRow, latestDeploy } from "../../apps/store";
import { viewApp } from "../../apps/views";
import type { PasteMode } from "../../envvars/diff";
import { planPaste } from "../../envvars/edit";
import { type EnvVariable, validateVariables } from "../../envvars/rules";
import { ENV_CHANGED_MESSAGE, type EnvEffect, type EnvSaveResult } from "../../envvars/save";
import { readEnv } from "../../envvars/store";
import type { AppEnv } from "../../http/context";
import { type Page, appPath, ownedApp, renderEnvironment } from "./app-tab-pages";
import { EnvPreviewPage, type EnvPasteForm } from "./env-section";
import { setFlash } from "./flash";
import { loadViewer, render } from "./layout";

/** Rows a form may carry; more is not an editor anyone types into. */
const MAX_FORM_ROWS = 1000;

const sectionPath = (id: string) => `${appPath(id)}/environment`;

/** A posted form's text fields. */
async function formFields(c: Page): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) if (typeof value === "string") fields[key] = value;
  return fields;
}

const versionOf = (fields: Record<string, string>) => (/^\d+$/.test(fields.version ?? "") ? Number(fields.version) : -1);
/** A browser sends CRLF line breaks from a textarea; values are kept with LF, as a paste reads them. */
const lf = (text: string) => text.replace(/\r\n?/g, "\n");

/** The sentence after a save, by what it did (docs/envvars.md, rule 6). */
function savedNotice(app: AppRow, effect: EnvEffect): string {
  if (effect === "unchanged") return "Nothing changed: these are the variables already saved.";
  if (effect === "applying") return "Environment variables saved. A new instance with them is starting; the running one serves until it answers.";
  if (app.status === "stopped") return "Environment variables saved. The app gets them when it next starts.";
  return "Environment variables saved. They are used from the first deploy.";
}

/** Saves through the app's controller and goes back to the Environment tab with the outcome. */
async function saveAndReturn(c: Page, app: AppRow, version: number, variables: EnvVariable[]) {
  const result: EnvSaveResult = await appController(c.env, app.id).saveEnv({ appId: app.id, version, variables, now: c.get("deps").now() });
  await setFlash(c, result.outcome === "refused" ? { section: "environment", error: result.message } : { section: "environment", notice: savedNotice(app, result.effect) });
  return c.redirect(sectionPath(app.id), 303);
}

async function preview(c: Page, app: AppRow, props: { version: number; paste: EnvPasteForm; diff: Parameters<typeof EnvPreviewPage>[0]["diff"]; confirmError?: string }, status: 200 | 400) {
  const view = viewApp(app, await latestDeploy(c.env, app.id), c.get("config").APPS_DOMAIN, c.req.url);
  return render(c, <EnvPreviewPage viewer={await loadViewer(c)} app={view} {...props} />, status);
}

/**
 * The Environment tab's forms (issue 14), under /console/apps. The rows form saves the whole
 * set or adds a row; the paste form shows a preview first and saves on its second post. Messages
 * appear under their rows; nothing is saved while any row is invalid.
 */
export const envPages = new Hono<AppEnv>()
  .post("/:id/env", async (c) => {
    const app = await ownedApp(c);
    const fields = await formFields(c);
    const count = Math.min(Number.parseInt(fields.rows ?? "0", 10) || 0, MAX_FORM_ROWS);
    const rows: EnvVariable[] = [];
    for (let i = 0; i < count; i++) {
      const key = (fields[`key_${i}`] ?? "").trim();
      const value = lf(fields[`value_${i}`] ?? "");
      if (fields[`remove_${i}`] || (key === "" && value === "")) continue;
      rows.push({ key, value });
    }
    const version = versionOf(fields);
    if (fields.action === "add") {
      return renderEnvironment(c, app, { rows: { version, rows: [...rows, { key: "", value: "" }] } });
    }
    const errors = validateVariables(rows);
    if (errors.length > 0) {
      const byRow = Object.fromEntries(errors.map((e) => [e.row, e.messages]));
      return renderEnvironment(c, app, { rows: { version, rows, errors: byRow } }, 400);
    }
    return saveAndReturn(c, app, version, rows);
  })
  .post("/:id/env/paste", async (c) => {
    const app = await ownedApp(c);
    const fields = await formFields(c);
    const version = versionOf(fields);
    const paste: EnvPasteForm = { text: fields.text ?? "", mode: (fields.mode === "replace" ? "replace" : "merge") as PasteMode };
    const current = await readEnv(c.env, app.id);
    if (!current || current.version !== version) {
      await setFlash(c, { section: "environment", error: ENV_CHANGED_MESSAGE });
      return c.redirect(sectionPath(app.id), 303);
    }
    const plan = planPaste(current.variables, { ...paste, confirm: fields.confirm?.trim() });
    if (plan.kind === "invalid") {
      return renderEnvironment(c, app, { rows: { version: current.version, rows: current.variables }, paste: { ...paste, errors: plan.errors } }, 400);
    }
    if (fields.step !== "save") return preview(c, app, { version, paste, diff: plan.diff }, 200);
    if (plan.kind === "needs_confirmation") {
      return preview(c, app, { version, paste, diff: plan.diff, confirmError: "Type REPLACE in capital letters to delete these variables." }, 400);
    }
    return saveAndReturn(c, app, version, plan.next);
  });
