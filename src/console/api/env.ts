import { createRoute, z } from "@hono/zod-openapi";
import { EnvPasteRequest, EnvPutRequest, confirmationMessage } from "../../envvars/edit";
import { ApiError } from "../../http/errors";
import { ownedApp } from "../actions/apps";
import { callerOf } from "../actions/caller";
import { type InvalidRows, invalidRows, planVariablesPaste, readVariables, saveVariables, storeVariables } from "../actions/env";
import type { Refusal } from "../actions/outcome";
import { AppIdParams } from "./app-schemas";
import { SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonBody, jsonBodyFirst, jsonReply } from "./openapi";
import { appFirst, requestedApp } from "./owned-app";

/**
 * The console's JSON routes for an app's environment variables (docs/envvars.md), under
 * `/console/api/apps/{id}/env`. Values travel in clear only here, to the app's owner; they are
 * never logged. What they do is in src/console/actions/env.ts, shared with the Environment tab.
 */

const TAGS = ["Environment variables"];
const Variable = z.object({ key: z.string(), value: z.string() });
const SetJson = z.object({ version: z.number().int(), variables: z.array(Variable) });
const SavedJson = SetJson.extend({ effect: z.enum(["stored", "applying", "unchanged"]).openapi({ description: "`stored`: kept for the next deploy; `applying`: a new instance is taking over; `unchanged`: identical." }) });
const DiffJson = z.object({ added: z.array(z.string()), changed: z.array(z.string()), removed: z.array(z.string()), unchanged: z.array(z.string()) });

const invalidEnv = errorReply("A row breaks a rule; `errors` lists each row's messages. Nothing was saved.", ["INVALID_ENV", "INVALID_REQUEST"]);
const changed = errorReply("The set changed since it was loaded, a deploy is running, or replace would delete variables without `confirm: \"REPLACE\"`.", ["ENV_CHANGED", "DEPLOY_IN_PROGRESS", "CONFIRMATION_REQUIRED"]);
const NOT_FOUND = { 404: errorReply("No app with this id in your account.", ["NOT_FOUND"]) };

const readRoute = createRoute({
  method: "get",
  path: "/{id}/env",
  operationId: "readEnv",
  tags: TAGS,
  summary: "The app's variables, in clear",
  request: { params: AppIdParams },
  responses: { 200: jsonReply(SetJson, "The saved set and its version."), ...NOT_FOUND, ...SIGNED_IN_REPLIES },
});

const putRoute = createRoute({
  method: "put",
  path: "/{id}/env",
  operationId: "saveEnv",
  tags: TAGS,
  summary: "Save the whole set",
  middleware: [appFirst, jsonBodyFirst] as const,
  request: { params: AppIdParams, body: jsonBody(EnvPutRequest, "The whole set and the version it was loaded at.") },
  responses: { 200: jsonReply(SavedJson, "Saved; `effect` says what happens next."), 400: invalidEnv, ...NOT_FOUND, 409: changed, ...SIGNED_IN_REPLIES },
});

const pasteRoute = createRoute({
  method: "post",
  path: "/{id}/env/paste",
  operationId: "pasteEnv",
  tags: TAGS,
  summary: "Paste `KEY=value` lines (merge or replace)",
  description: "With `dry_run` it answers what the paste would change and saves nothing.",
  middleware: [jsonBodyFirst] as const,
  request: { params: AppIdParams, body: jsonBody(EnvPasteRequest, "The text, the mode, the version it was loaded at.") },
  responses: { 200: jsonReply(z.union([SavedJson, DiffJson]), "Saved (or, with `dry_run`, the changes it would make)."), 400: invalidEnv, ...NOT_FOUND, 409: changed, ...SIGNED_IN_REPLIES },
});

/** A refusal as its envelope; rows that break a rule come with their messages. */
function refusal(result: Refusal | InvalidRows): never {
  throw new ApiError(result.code, result.message, "errors" in result ? { extra: { errors: result.errors } } : {});
}

export const envRoutes = consoleRouter()
  .openapi(readRoute, async (c) => {
    const caller = callerOf(c);
    const set = await readVariables(caller, await ownedApp(caller, c.req.valid("param").id));
    return c.json({ version: set.version, variables: set.variables }, 200);
  })
  .openapi(putRoute, async (c) => {
    const input = c.req.valid("json");
    const saved = await saveVariables(callerOf(c), await requestedApp(c), input.version, input.variables);
    if (!saved.ok) refusal(saved);
    return c.json({ version: saved.version, variables: input.variables, effect: saved.effect }, 200);
  })
  .openapi(pasteRoute, async (c) => {
    const caller = callerOf(c);
    const input = c.req.valid("json");
    const app = await ownedApp(caller, c.req.valid("param").id);
    const planned = await planVariablesPaste(caller, app, input);
    if (!planned.ok) refusal(planned);
    const { plan } = planned;
    if (plan.kind === "invalid") refusal(invalidRows(plan.errors));
    if (input.dry_run) return c.json(plan.diff, 200);
    if (plan.kind === "needs_confirmation") {
      throw new ApiError("CONFIRMATION_REQUIRED", confirmationMessage(plan.removed), { extra: { removed: plan.removed } });
    }
    const saved = await storeVariables(caller, app, input.version, plan.next);
    if (!saved.ok) refusal(saved);
    return c.json({ version: saved.version, variables: plan.next, effect: saved.effect }, 200);
  });
