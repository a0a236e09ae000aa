import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";

/** Every console body but a SQL one: credentials, names, a CSRF token; far below this. */
export const CONSOLE_BODY_BYTES = 64 * 1024;
/** A SQL console body: up to 100 000 characters of SQL (4 bytes each at most) and 100 parameters. */
export const SQL_BODY_BYTES = 1024 * 1024;

/**
 * An environment variable body: a whole set, where one value alone may be 64 KiB (docs/envvars.md, rule 3)
 * and still has to reach the row check to get its message rather than a 413.
 */
export const ENV_BODY_BYTES = 1024 * 1024;
/** The console's environment routes: the JSON ones and the page forms (`/env`, `/env/...`). */
const ENV_PATH = /\/apps\/[^/]+\/env(\/[a-z]+)?$/;

const tooLarge = (limit: number) => () => {
  throw new ApiError("PAYLOAD_TOO_LARGE", `The request body is larger than ${limit / 1024} KiB.`);
};
const general = bodyLimit({ maxSize: CONSOLE_BODY_BYTES, onError: tooLarge(CONSOLE_BODY_BYTES) });
const sql = bodyLimit({ maxSize: SQL_BODY_BYTES, onError: tooLarge(SQL_BODY_BYTES) });
const envVars = bodyLimit({ maxSize: ENV_BODY_BYTES, onError: tooLarge(ENV_BODY_BYTES) });

/**
 * Bounds the body of every console request (Hono's bodyLimit: Content-Length up front, else
 * counted as read), before any guard reads it: 413 PAYLOAD_TOO_LARGE in the envelope.
 */
export function consoleBodyLimit(): MiddlewareHandler<AppEnv> {
  return async function consoleBodyLimit(c, next) {
    const path = c.req.path;
    return (path.endsWith("/sql") ? sql : ENV_PATH.test(path) ? envVars : general)(c, next);
  };
}
