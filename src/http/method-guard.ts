import type { Hono } from "hono";
import { methodNotAllowed } from "hono/method-not-allowed";
import type { AppEnv } from "./context";
import { errorResponse } from "./errors";

/**
 * 405 METHOD_NOT_ALLOWED, with `Allow`, for a path that has routes but none for the request's
 * method. Hono's middleware derives the answer from the routes registered on `app` (read at the
 * first request, once every route is mounted), so it cannot drift from them.
 */
export function methodGuard(app: Hono<AppEnv, any, any>) {
  return methodNotAllowed<AppEnv>({
    app,
    onMethodNotAllowed: (c, methods) => {
      const allowed = methods.join(", ");
      const res = errorResponse("METHOD_NOT_ALLOWED", `Method ${c.req.method} is not allowed here. Allowed: ${allowed}.`);
      res.headers.set("Allow", allowed);
      return res;
    },
  });
}
