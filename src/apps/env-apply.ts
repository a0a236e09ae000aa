import { database } from "../db/client";
import { ENV_CHANGED_MESSAGE, type EnvApplyRunner, type EnvSaveResult } from "../envvars/save";
import { sameVariables } from "../envvars/diff";
import type { EnvVariable } from "../envvars/rules";
import { envRowWrites, launchEnv, readEnv } from "../envvars/store";
import { log } from "../http/log";
import { maskText, secretsToMask } from "../logs/mask";
import { runtimeFor } from "../runtime";
import { envVersionWrite, instanceColumns, recordEnvFailure, switchInstance } from "./app-columns";
import { relaunch } from "./relaunch";
import { type AppRow, getApp } from "./store";

/**
 * Saving a variable set (docs/envvars.md, rules 6 and 7), run by the app's AppController with its
 * change mark held, and the switch to an instance started with it. No value is ever put in a log line.
 */

/** After the first deploy: the app has an instance serving, from an image a new one can start from. */
function isServing(app: AppRow): boolean {
  return app.status === "running" && app.image !== null && app.port !== null && app.liveDeployId !== null;
}

/** Replaces the app's set with `variables` and makes it `version`, in one batch. */
export async function writeEnv(env: Env, appId: string, version: number, variables: readonly EnvVariable[]): Promise<void> {
  const rows = await envRowWrites(env, appId, variables);
  await database(env).batch([envVersionWrite(env, appId, version), ...rows]);
}

/**
 * Writes the set unless it is stale (ENV_CHANGED, nothing written) or identical (no new version).
 * When the app is serving, returns the run that starts the new instance, for the caller to start.
 */
export async function saveEnvSet(
  env: Env,
  input: { appId: string; version: number; variables: EnvVariable[]; now: number },
): Promise<
  | Extract<EnvSaveResult, { outcome: "refused" }>
  | { outcome: "saved"; version: number; effect: "stored" | "unchanged" }
  | { outcome: "saved"; version: number; effect: "applying"; apply: EnvApplyRunner }
> {
  const app = await getApp(env, input.appId);
  const current = app && (await readEnv(env, app.id));
  if (!app || !current) return { outcome: "refused", code: "NOT_FOUND", message: "No app with this id exists in your account." };
  if (current.version !== input.version) return { outcome: "refused", code: "ENV_CHANGED", message: ENV_CHANGED_MESSAGE };
  if (sameVariables(current.variables, input.variables)) return { outcome: "saved", version: current.version, effect: "unchanged" };
  const version = current.version + 1;
  await writeEnv(env, app.id, version, input.variables);
  log("info", "environment variables saved", { app_id: app.id, version, count: input.variables.length });
  if (!isServing(app)) return { outcome: "saved", version, effect: "stored" };
  return { outcome: "saved", version, effect: "applying", apply: () => applyEnv(env, app.id, version) };
}

/**
 * Starts a second instance from the live image with the saved set, waits for its check, switches
 * traffic to it (only if the app still runs the instance it replaces: a switch finishing late,
 * after a newer deploy, changes nothing), writing the old one's retire row with the switch (the
 * controller's alarm stops it after it drains). A failed check leaves the old instance serving and
 * records the failure with the check's log for the app page.
 */
export async function applyEnv(env: Env, appId: string, version: number): Promise<void> {
  const lines: string[] = [];
  const fail = (message: string) => recordEnvFailure(env, appId, { version, message, log: lines.join("\n"), at: Date.now() });
  try {
    const app = await getApp(env, appId);
    const runtime = runtimeFor(env);
    if (!app || !isServing(app)) return;
    if (!runtime) return void (await fail("No container engine is configured, so no instance with the new variables could be started."));
    const masked = secretsToMask(Object.values((await launchEnv(env, appId)).env));
    const outcome = await relaunch(env, runtime, app, {
      // The check's output is kept in D1 for the app page: the app's own values are masked in it.
      log: async (text) => void lines.push(maskText(text, masked)),
      switchTo: async (instance, { envVersion, retire }) =>
        (await switchInstance(env, app, { ...instanceColumns(instance), envAppliedVersion: envVersion }, app.instanceId, { retire }))
          ? { switched: true, replaced: { instanceId: app.instanceId, image: null, serving: true } }
          : { switched: false, reason: "a newer change to the app took over while this instance started." },
    });
    if (outcome.ok) log("info", "environment variables applied", { app_id: appId, version });
    else if (outcome.kind === "not_switched") log("info", "environment variables not applied: a newer change took over", { app_id: appId, version });
    else {
      log("info", "environment variables not applied: the new instance failed its check", { app_id: appId, version, kind: outcome.kind });
      await fail(outcome.message);
    }
  } catch (err) {
    log("warn", "environment variables not applied", { app_id: appId, version, error_name: err instanceof Error ? err.name : "unknown" });
    await fail("The new instance could not be started on our side; the running instance keeps the previous variables. Redeploy to start one with the saved variables.").catch(() => undefined);
  }
}

/** The deadline passed with no report: the set is recorded as not applied. */
export async function envApplyTimedOut(env: Env, appId: string, now: number): Promise<void> {
  await envNotApplied(env, appId, now, "The new instance did not take over in time; the running instance keeps the previous variables.", "environment variable switch passed its deadline");
}

/** The switch's run was lost with a restart of the app's controller: recorded as not applied the same way. */
export async function envApplyLost(env: Env, appId: string, now: number): Promise<void> {
  await envNotApplied(env, appId, now, "The switch to the new variables stopped when the control plane restarted; the running instance keeps the previous variables. Redeploy to start one with the saved variables.", "environment variable switch lost with a restart");
}

/** `applying` ends: the saved set is recorded as not applied, unless an instance with it took over meanwhile. */
async function envNotApplied(env: Env, appId: string, now: number, message: string, event: string): Promise<void> {
  const app = await getApp(env, appId);
  if (!app || app.envAppliedVersion >= app.envVersion) return;
  log("warn", event, { app_id: appId, version: app.envVersion });
  await recordEnvFailure(env, appId, { version: app.envVersion, message, log: "", at: now });
}
