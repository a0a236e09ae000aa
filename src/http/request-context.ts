import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { getConfig } from "../config";
import type { AppEnv, Deps } from "./context";
import { log } from "./log";
import { setReplyHeaders } from "./reply-headers";
import { requestLogRate, shouldLogRequest } from "./request-log";

/**
 * First middleware of every request: gives it an id (echoed as X-Request-Id), validates the
 * settings, and writes its log line when the reply is ready: every error and slow request, a
 * sample of the rest (request-log.ts). The line names the route pattern, never the URL, because
 * download URLs carry signatures.
 */
export function requestContext(deps: Deps): MiddlewareHandler<AppEnv> {
  return async function requestContext(c, next) {
    const started = performance.now();
    const requestId = deps.uuid();
    c.set("requestId", requestId);
    c.set("deps", deps);
    c.set("config", getConfig(c.env));
    await next();
    setReplyHeaders(c, { "X-Request-Id": requestId });
    const durationMs = performance.now() - started;
    const rate = requestLogRate(c.res.status, durationMs);
    if (!shouldLogRequest(rate, (deps.random ?? Math.random)())) return;
    log("info", "request", {
      request_id: requestId,
      method: c.req.method,
      route: routePath(c, -1),
      status: c.res.status,
      duration_ms: Math.round(durationMs * 100) / 100,
      account_id: c.get("accountId"),
      ...(rate > 1 ? { sample_rate: rate } : {}),
    });
  };
}
