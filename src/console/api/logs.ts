import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../http/context";
import { callerOf } from "../actions/caller";
import { type KeepAlive, openLogStream, searchAppLogs } from "../actions/logs";
import { AppIdParams } from "./app-schemas";
import { SSE_HEADERS } from "./deploys";
import { NO_STORE, SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonReply } from "./openapi";
import { requestedApp } from "./owned-app";

/**
 * The console's JSON routes for an app's output (`/console/api/apps/{id}/logs`): search, and the
 * live stream. What they do is in src/console/actions/logs.ts, shared with the Logs tab.
 */

const TAGS = ["Logs"];
const NOT_FOUND = { 404: errorReply("No app with this id in your account.", ["NOT_FOUND"]) };

// The query is read by the action after the app is found (a 404 answers before a bad query's 400),
// so these only document it.
const SearchQuery = z.object({
  since: z.string().optional().openapi({ description: "ISO 8601 time (UTC): lines from then on." }),
  until: z.string().optional().openapi({ description: "ISO 8601 time (UTC): lines up to then; not before `since`." }),
  q: z.string().optional().openapi({ description: "Text the line contains (at most 200 characters)." }),
  limit: z.string().optional().openapi({ description: "At most this many lines, 1 to 1000." }),
});

const LogLineJson = z.object({ at: z.number().int().openapi({ description: "Milliseconds since the epoch." }), stream: z.enum(["stdout", "stderr"]), text: z.string() });

const searchRoute = createRoute({
  method: "get",
  path: "/{id}/logs",
  operationId: "searchLogs",
  tags: TAGS,
  summary: "Search an app's output",
  request: { params: AppIdParams, query: SearchQuery },
  responses: {
    200: jsonReply(z.object({ lines: z.array(LogLineJson) }), "The lines found, oldest first.", NO_STORE),
    400: errorReply("A query parameter is refused (named).", ["INVALID_REQUEST"]),
    ...NOT_FOUND,
    ...SIGNED_IN_REPLIES,
  },
});

const streamRoute = createRoute({
  method: "get",
  path: "/{id}/logs/stream",
  operationId: "streamLogs",
  tags: TAGS,
  summary: "The serving instance's output, live",
  description: "Server-sent events, one line each; `Last-Event-ID` (or `last_event_id`) resumes after that line. The stream ends when the instance stops or is replaced.",
  request: { params: AppIdParams, query: z.object({ last_event_id: z.string().optional().openapi({ description: "Resume after this line (for a page that reopens the stream itself)." }) }) },
  responses: {
    200: { description: "The output as it comes.", headers: NO_STORE, content: { "text/event-stream": { schema: z.string() } } },
    ...NOT_FOUND,
    429: errorReply("The account has its most live log streams open; `Retry-After` says when to try again.", ["RATE_LIMIT_EXCEEDED"]),
    ...SIGNED_IN_REPLIES,
  },
});

/** Lets a promise finish after the reply (if it is lost, what it does also happens later by itself). */
function keepAliveOf(c: Context<AppEnv>): KeepAlive {
  return (promise) => {
    try {
      c.executionCtx.waitUntil(promise);
    } catch {
      // No execution context (a direct call in tests): the promise runs on its own.
    }
  };
}

export const logRoutes = consoleRouter()
  .openapi(searchRoute, async (c) => {
    const app = await requestedApp(c);
    const lines = await searchAppLogs(callerOf(c), app, c.req.query());
    return c.json({ lines }, 200, { "Cache-Control": "no-store" });
  })
  .openapi(streamRoute, async (c) => {
    const app = await requestedApp(c);
    const resume = c.req.header("Last-Event-ID") ?? c.req.query("last_event_id");
    return c.body(await openLogStream(callerOf(c), app, resume, keepAliveOf(c)), 200, SSE_HEADERS);
  });
