import { createRoute, z } from "@hono/zod-openapi";
import { ApiError } from "../../http/errors";
import { ownedApp } from "../actions/apps";
import { callerOf } from "../actions/caller";
import { deployViews, deployWithLog, rollBack, startDeploy } from "../actions/deploys";
import { openDeployLogStream } from "../actions/logs";
import { AppIdParams, DeployJson, DeployParams, StartedDeployJson } from "./app-schemas";
import { NO_STORE, SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonReply } from "./openapi";

/**
 * The console's JSON routes for an app's deploys (`/console/api/apps/{id}/deploy`, `.../deploys`):
 * Deploy, the history, Rollback and a deploy's log. What they do is in src/console/actions/deploys.ts.
 */

const TAGS = ["Deploys"];
const NOT_FOUND = { 404: errorReply("No such app in your account, or no such deploy of it.", ["NOT_FOUND"]) };
const REFUSED = errorReply("Refused: another change is in flight, or nothing to roll back to.", ["CHANGE_IN_FLIGHT", "INVALID_STATE", "ROLLBACK_UNAVAILABLE"]);
const SSE = { "text/event-stream": { schema: z.string().openapi({ description: "Server-sent events, one log line each; `Last-Event-ID` resumes." }) } };

const deployRoute = createRoute({
  method: "post",
  path: "/{id}/deploy",
  operationId: "deployApp",
  tags: TAGS,
  summary: "Deploy: build the branch and start the app",
  description: "Pressed while a deploy runs, it answers that deploy and starts nothing.",
  request: { params: AppIdParams },
  responses: { 202: jsonReply(StartedDeployJson, "The deploy, building."), 402: errorReply("Not enough credit for the first period.", ["INSUFFICIENT_FUNDS"]), ...NOT_FOUND, 409: REFUSED, ...SIGNED_IN_REPLIES },
});

const listRoute = createRoute({
  method: "get",
  path: "/{id}/deploys",
  operationId: "listDeploys",
  tags: TAGS,
  summary: "An app's deploys, newest first",
  request: { params: AppIdParams },
  responses: { 200: jsonReply(z.object({ deploys: z.array(DeployJson) }), "The last 50 deploys."), ...NOT_FOUND, ...SIGNED_IN_REPLIES },
});

const rollbackRoute = createRoute({
  method: "post",
  path: "/{id}/deploys/{deployId}/rollback",
  operationId: "rollBack",
  tags: TAGS,
  summary: "Run an earlier deploy's image again (no rebuild)",
  request: { params: DeployParams },
  responses: { 202: jsonReply(StartedDeployJson, "The rollback deploy, starting."), ...NOT_FOUND, 409: REFUSED, ...SIGNED_IN_REPLIES },
});

const logRoute = createRoute({
  method: "get",
  path: "/{id}/deploys/{deployId}/log",
  operationId: "deployLog",
  tags: TAGS,
  summary: "A deploy's whole log",
  request: { params: DeployParams },
  responses: {
    200: { description: "The log as text.", headers: NO_STORE, content: { "text/plain": { schema: z.string() } } },
    ...NOT_FOUND,
    ...SIGNED_IN_REPLIES,
  },
});

const logStreamRoute = createRoute({
  method: "get",
  path: "/{id}/deploys/{deployId}/log/stream",
  operationId: "streamDeployLog",
  tags: TAGS,
  summary: "A deploy's log, line by line while it runs",
  request: { params: DeployParams },
  responses: { 200: { description: "The log so far, then each new line until the deploy ends.", headers: NO_STORE, content: SSE }, ...NOT_FOUND, ...SIGNED_IN_REPLIES },
});

// Proxies such as nginx would otherwise hold the events back (X-Accel-Buffering).
export const SSE_HEADERS = { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no" };

export const deployRoutes = consoleRouter()
  .openapi(deployRoute, async (c) => {
    const caller = callerOf(c);
    const started = await startDeploy(caller, await ownedApp(caller, c.req.valid("param").id));
    if (!started.ok) throw new ApiError(started.code, started.message);
    return c.json({ deploy: started.deploy }, 202);
  })
  .openapi(listRoute, async (c) => {
    const caller = callerOf(c);
    return c.json({ deploys: await deployViews(caller, await ownedApp(caller, c.req.valid("param").id)) }, 200);
  })
  .openapi(rollbackRoute, async (c) => {
    const caller = callerOf(c);
    const { id, deployId } = c.req.valid("param");
    const rolled = await rollBack(caller, await ownedApp(caller, id), deployId);
    if (!rolled.ok) throw new ApiError(rolled.code, rolled.message);
    return c.json({ deploy: rolled.deploy }, 202);
  })
  .openapi(logStreamRoute, async (c) => {
    const caller = callerOf(c);
    const { id, deployId } = c.req.valid("param");
    const resume = c.req.header("Last-Event-ID") ?? c.req.query("last_event_id") ?? null;
    return c.body(await openDeployLogStream(caller, await ownedApp(caller, id), deployId, resume), 200, SSE_HEADERS);
  })
  .openapi(logRoute, async (c) => {
    const caller = callerOf(c);
    const { id, deployId } = c.req.valid("param");
    const { log } = await deployWithLog(caller, await ownedApp(caller, id), deployId);
    return c.text(log, 200, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
  });
