import { Hono } from "hono";
import type { AppRow } from "../../apps/store";
import type { PasteMode } from "../../envvars/diff";
import type { EnvVariable } from "../../envvars/rules";
import type { EnvEffect } from "../../envvars/save";
import type { AppEnv } from "../../http/context";
import { callerOf } from "../actions/caller";
import { type InvalidRows, planVariablesPaste, saveVariables, storeVariables } from "../actions/env";
import type { Outcome } from "../actions/outcome";
import { type Page, appPath, ownedApp, renderEnvironment, viewOf } from "./app-tab-pages";
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

/** Back to the Environment tab with what the save did, or why it was refused. */
async function backToTab(c: Page, app: AppRow, saved: Outcome<{ effect: EnvEffect }>) {
  await setFlash(c, saved.ok ? { section: "environment", notice: savedNotice(app, saved.effect) } : { section: "environment", error: saved.message });
  return c.redirect(sectionPath(app.id), 303);
}

async function preview(c: Page, app: AppRow, props: { version: number; paste: EnvPasteForm; diff: Parameters<typeof EnvPreviewPage>[0]["diff"]; confirmError?: string }, status: 200 | 400) {
  return render(c, <EnvPreviewPage viewer={await loadViewer(c)} app={await viewOf(c, app, false)} {...props} />, status);
}

/** Rows that break a rule, by row, as the rows form shows them. */
const byRow = (invalid: InvalidRows) => Object.fromEntries(invalid.errors.map((e) => [e.row, e.messages]));

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
    const saved = await saveVariables(callerOf(c), app, version, rows);
    if (!saved.ok && "errors" in saved) return renderEnvironment(c, app, { rows: { version, rows, errors: byRow(saved) } }, 400);
    return backToTab(c, app, saved);
  })
  .post("/:id/env/paste", async (c) => {
    const app = await ownedApp(c);
    const fields = await formFields(c);
    const version = versionOf(fields);
    const paste: EnvPasteForm = { text: fields.text ?? "", mode: (fields.mode === "replace" ? "replace" : "merge") as PasteMode };
    const planned = await planVariablesPaste(callerOf(c), app, { version, ...paste, confirm: fields.confirm?.trim() });
    if (!planned.ok) return backToTab(c, app, planned);
    const { set, plan } = planned;
    if (plan.kind === "invalid") {
      return renderEnvironment(c, app, { rows: { version: set.version, rows: set.variables }, paste: { ...paste, errors: plan.errors } }, 400);
    }
    if (fields.step !== "save") return preview(c, app, { version, paste, diff: plan.diff }, 200);
    if (plan.kind === "needs_confirmation") {
      return preview(c, app, { version, paste, diff: plan.diff, confirmError: "Type REPLACE in capital letters to delete these variables." }, 400);
    }
    return backToTab(c, app, await storeVariables(callerOf(c), app, version, plan.next));
  });
