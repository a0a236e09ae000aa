import type { z } from "zod";
import { appController } from "../../apps/app-controller";
import type { ControlResult } from "../../apps/controls";
import { servingInstance } from "../../apps/instance-state";
import type { PlanId } from "../../apps/plans";
import { createApp } from "../../apps/service";
import type { AppSettingsRequest, NewAppRequest } from "../../apps/settings";
import { type AppRow, getOwnedApp, latestDeploy, listApps } from "../../apps/store";
import { type AppView, viewApp } from "../../apps/views";
import type { ErrorCode } from "../../http/errors";
import { repositoryProblem } from "../../source/forge";
import type { Caller } from "./caller";
import { type Outcome, type Refusal, refuse } from "./outcome";

/**
 * What can be done to an app, for the console's JSON routes (api/apps.ts) and its pages
 * (pages/app-pages.tsx, push-pages.tsx) alike. Every change goes through the app's AppController;
 * another account's app answers 404 like a missing one.
 */

export type AppSettings = z.output<typeof AppSettingsRequest>;

/** The caller's app (another account's answers 404 NOT_FOUND like a missing one). */
export function ownedApp(caller: Caller, id: string): Promise<AppRow> {
  return getOwnedApp(caller.env, caller.accountId, id);
}

/** The app as the console shows it; `withInstance` also asks the engine how the serving instance is. */
export async function appView(caller: Caller, row: AppRow, withInstance = true): Promise<AppView> {
  const [latest, instance] = await Promise.all([latestDeploy(caller.env, row.id), withInstance ? servingInstance(caller.env, row, caller.deps.now()) : null]);
  return viewApp(row, latest, caller.config.APPS_DOMAIN, caller.url, instance);
}

/** The app as it is now, read again after a change. */
export async function currentView(caller: Caller, appId: string): Promise<AppView> {
  return appView(caller, await ownedApp(caller, appId));
}

/** The caller's apps, oldest first. */
export async function listAppViews(caller: Caller): Promise<AppView[]> {
  const rows = await listApps(caller.env, caller.accountId);
  return Promise.all(rows.map((row) => appView(caller, row)));
}

/** A controller's refusal as an outcome. */
const refused = (result: { code: string; message: string }): Refusal => refuse(result.code as ErrorCode, result.message);

/** The address rule of source fetches under this Worker's ALLOW_LOCAL_SOURCES, checked when the address is saved. */
function sourceRefusal(caller: Caller, repository: string | undefined): Refusal | null {
  const problem = repository === undefined ? null : repositoryProblem(repository, { allowLocal: caller.config.ALLOW_LOCAL_SOURCES });
  return problem ? refuse("INVALID_REQUEST", problem, "repository") : null;
}

/**
 * Creates an app (not deployed). A refused repository address is INVALID_REQUEST; a subdomain
 * already taken or held is CONFLICT, both naming their field.
 */
export async function createNewApp(caller: Caller, input: NewAppRequest): Promise<Outcome<{ app: AppRow }>> {
  const source = sourceRefusal(caller, input.repository);
  if (source) return source;
  const created = await createApp(caller.env, { ...input, accountId: caller.accountId, id: caller.deps.uuid(), now: caller.deps.now() });
  return created.ok ? { ok: true, app: created.app } : refuse("CONFLICT", created.message, created.field);
}

/**
 * Saves the settings given, through the controller. A field the records refuse (a subdomain
 * taken, fixed after the first deploy) is CONFLICT naming the field; the controller's refusal
 * (CHANGE_IN_FLIGHT, ...) names none.
 */
export async function saveSettings(caller: Caller, app: AppRow, settings: AppSettings): Promise<Outcome> {
  const source = sourceRefusal(caller, settings.repository);
  if (source) return source;
  const saved = await appController(caller.env, app.id).changeSettings({ appId: app.id, settings, now: caller.deps.now() });
  if ("outcome" in saved) return refused(saved);
  return saved.ok ? { ok: true } : refuse("CONFLICT", saved.message, saved.field);
}

/** The engine controls of docs/apps.md, App controls. */
export type EngineControl = "stop" | "start" | "restart";

/** Stop, Start or Restart, through the controller: done, or its refusal (CHANGE_IN_FLIGHT, INVALID_STATE, ...). */
export async function runControl(caller: Caller, app: AppRow, control: EngineControl): Promise<Outcome> {
  const controller = appController(caller.env, app.id);
  const input = { appId: app.id, now: caller.deps.now() };
  const result: ControlResult = control === "stop" ? await controller.stop(input) : control === "start" ? await controller.start(input) : await controller.restart(input);
  return result.outcome === "refused" ? refused(result) : { ok: true };
}

/** Change plan, through the controller (refused with PLAN_REQUIRED while the app has custom domains the new plan does not allow). */
export async function changePlan(caller: Caller, app: AppRow, plan: PlanId): Promise<Outcome> {
  const result = await appController(caller.env, app.id).changePlan({ appId: app.id, plan, now: caller.deps.now() });
  return result.outcome === "refused" ? refused(result) : { ok: true };
}

/** Deletes the app through the controller: its instance, images, logs, domains and records. */
export async function deleteApp(caller: Caller, app: AppRow): Promise<Outcome> {
  const result = await appController(caller.env, app.id).delete({ appId: app.id, now: caller.deps.now() });
  return result.outcome === "refused" ? refused(result) : { ok: true };
}
