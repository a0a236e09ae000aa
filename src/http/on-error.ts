import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ConfigError } from "../config";
import type { AppEnv } from "./context";
import { ApiError, errorResponse } from "./errors";
import { describeError, log } from "./log";

/** Turns every thrown error into the spec's envelope; unknown ones become a bare 500. */
export function onError(err: Error, c: Context<AppEnv>): Response {
  const requestId = c.get("requestId");
  let res: Response;
  if (err instanceof ApiError) {
    res = errorResponse(err.code, err.message, { headers: err.options.headers, extra: err.options.extra });
    if (err.options.cause) log("warn", "request failed", { request_id: requestId, code: err.code, ...describeError(err.options.cause) });
  } else if (err instanceof HTTPException && err.status < 500) {
    const code = err.status === 404 ? "NOT_FOUND" : err.status === 401 ? "UNAUTHORIZED" : "INVALID_REQUEST";
    res = errorResponse(code, err.message || "The request is not valid.");
  } else {
    log("error", err instanceof ConfigError ? "configuration invalid" : "unhandled error", {
      request_id: requestId,
      method: c.req.method,
      ...describeError(err),
    });
    res = errorResponse("INTERNAL_ERROR", "Something went wrong on our side. Quote the request id when you contact support.");
  }
  if (requestId) res.headers.set("X-Request-Id", requestId);
  return res;
}
