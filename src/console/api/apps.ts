import { type RouteHandler, createRoute, z } from "@hono/zod-openapi";
import { AppSettingsPatch, NewAppRequest, PlanRequest } from "../../apps/settings";
import type { AppEnv } from "../../http/context";
import { ApiError, invalid } from "../../http/errors";
import { type EngineControl, appView, changePlan, createNewApp, currentView, deleteApp, listAppViews, ownedApp, runControl, saveSettings } from "../actions/apps";
import { callerOf } from "../actions/caller";
import type { Refusal } from "../actions/outcome";
import { AppIdParams, AppJson, SuccessJson } from "./app-schemas";
import { deployRoutes } from "./deploys";
import { logRoutes } from "./logs";
import { SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonBody, jsonBodyFirst, jsonReply } from "./openapi";
import { appFirst, requestedApp } from "./owned-app";

/**
 * The console's JSON routes for apps (`/console/api/apps`), one operation each; what they do is
 * in src/console/actions/apps.ts, shared with the pages. Every change goes through the app's
 * AppController; another account's app answers 404 like a missing one.
 */

const TAGS = ["Apps"];
const NOT_FOUND = { 404: errorReply("No app with this id in your account (another account's answers the same).", ["NOT_FOUND"]) };
const REFUSED = errorReply("The controller refused: another change is in flight, or the app's state does not allow it.", ["CHANGE_IN_FLIGHT", "INVALID_STATE", "DELETE_FAILED"]);
const ENGINE = { 502: errorReply("The new instance did not start.", ["LAUNCH_FAILED"]), 503: errorReply("The engine is not reachable or has no room.", ["ENGINE_UNAVAILABLE", "INSUFFICIENT_CAPACITY"]) };
const appReply = (description: string) => ({ 200: jsonReply(AppJson, description), ...NOT_FOUND, ...SIGNED_IN_REPLIES });

/** A refusal as its error reply; one naming a field is 400 INVALID_REQUEST `field: message`, as these routes have always said. */
function refusal(result: Refusal): never {
  throw result.field ? invalid(`${result.field}: ${result.message}`) : new ApiError(result.code, result.message);
}

const listRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "listApps",
  tags: TAGS,
  summary: "The account's apps",
  responses: { 200: jsonReply(z.object({ apps: z.array(AppJson) }), "Every app of the account."), ...SIGNED_IN_REPLIES },
});

const createAppRoute = createRoute({
  method: "post",
  path: "/",
  operationId: "createApp",
  tags: TAGS,
  summary: "Create an app (not deployed)",
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(NewAppRequest, "The app's name and source; branch, paths, subdomain and plan have defaults.") },
  responses: { 201: jsonReply(AppJson, "Created; press Deploy to build it."), 400: errorReply("A field is refused, or the subdomain is taken or held.", ["INVALID_REQUEST"]), ...SIGNED_IN_REPLIES },
});

const getRoute = createRoute({ method: "get", path: "/{id}", operationId: "getApp", tags: TAGS, summary: "One app", request: { params: AppIdParams }, responses: appReply("The app.") });

const updateRoute = createRoute({
  method: "patch",
  path: "/{id}",
  operationId: "updateApp",
  tags: TAGS,
  summary: "Change an app's settings",
  description: "An absent field stays as it is; the source settings are used from the next deploy.",
  middleware: [appFirst, jsonBodyFirst] as const,
  request: { params: AppIdParams, body: jsonBody(AppSettingsPatch, "At least one setting: name, repository, branch, root_directory, dockerfile_path, subdomain, health_check, source_token.") },
  responses: { ...appReply("The app with its new settings."), 400: errorReply("A field is refused, or the subdomain is taken, held or fixed.", ["INVALID_REQUEST"]), 409: REFUSED },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/{id}",
  operationId: "deleteApp",
  tags: TAGS,
  summary: "Delete an app",
  request: { params: AppIdParams },
  responses: { 200: jsonReply(SuccessJson, "Deleted: its address no longer answers."), ...NOT_FOUND, 409: REFUSED, ...SIGNED_IN_REPLIES },
});

const controlRoute = (control: EngineControl, summary: string) =>
  createRoute({
    method: "post",
    path: `/{id}/${control}`,
    operationId: `${control}App`,
    tags: TAGS,
    summary,
    request: { params: AppIdParams },
    responses: { ...appReply("The app afterwards."), 402: errorReply("Not enough credit to start.", ["INSUFFICIENT_FUNDS"]), 409: REFUSED, ...ENGINE },
  });

const planRoute = createRoute({
  method: "post",
  path: "/{id}/plan",
  operationId: "changePlan",
  tags: TAGS,
  summary: "Change an app's plan",
  description: "A running app moves to a new instance with the plan's limits; any other only records the plan.",
  middleware: [jsonBodyFirst] as const,
  request: { params: AppIdParams, body: jsonBody(PlanRequest, "The new plan.") },
  responses: {
    ...appReply("The app on its new plan."),
    400: errorReply("Not a plan.", ["INVALID_REQUEST"]),
    402: errorReply("Not enough credit.", ["INSUFFICIENT_FUNDS"]),
    403: errorReply("The plan does not allow the app's custom domains (or no CSRF token).", ["PLAN_REQUIRED", "CSRF_REJECTED"]),
    409: REFUSED,
    ...ENGINE,
  },
});

/** Stop, Start or Restart: the app as it is afterwards. */
function controlHandler(control: EngineControl): RouteHandler<ReturnType<typeof controlRoute>, AppEnv> {
  return async (c) => {
    const caller = callerOf(c);
    const app = await ownedApp(caller, c.req.param("id")!);
    const done = await runControl(caller, app, control);
    if (!done.ok) refusal(done);
    return c.json(await currentView(caller, app.id), 200);
  };
}

export const appRoutes = consoleRouter()
  .openapi(listRoute, async (c) => c.json({ apps: await listAppViews(callerOf(c)) }, 200))
  .openapi(createAppRoute, async (c) => {
    const caller = callerOf(c);
    const created = await createNewApp(caller, c.req.valid("json"));
    if (!created.ok) refusal(created);
    return c.json(await appView(caller, created.app), 201);
  })
  .openapi(getRoute, async (c) => {
    const caller = callerOf(c);
    return c.json(await appView(caller, await ownedApp(caller, c.req.valid("param").id)), 200);
  })
  .openapi(updateRoute, async (c) => {
    const caller = callerOf(c);
    const app = await requestedApp(c);
    const saved = await saveSettings(caller, app, c.req.valid("json"));
    if (!saved.ok) refusal(saved);
    return c.json(await currentView(caller, app.id), 200);
  })
  .openapi(deleteRoute, async (c) => {
    const caller = callerOf(c);
    const deleted = await deleteApp(caller, await ownedApp(caller, c.req.valid("param").id));
    if (!deleted.ok) refusal(deleted);
    return c.json({ success: true as const }, 200);
  })
  .openapi(planRoute, async (c) => {
    const caller = callerOf(c);
    const { plan } = c.req.valid("json");
    const app = await ownedApp(caller, c.req.valid("param").id);
    const changed = await changePlan(caller, app, plan);
    if (!changed.ok) refusal(changed);
    return c.json(await currentView(caller, app.id), 200);
  });

appRoutes.openapi(controlRoute("stop", "Stop an app"), controlHandler("stop"));
appRoutes.openapi(controlRoute("start", "Start a stopped app"), controlHandler("start"));
appRoutes.openapi(controlRoute("restart", "Restart an app's process"), controlHandler("restart"));
appRoutes.route("/", logRoutes);
appRoutes.route("/", deployRoutes);
