import type { Hono } from "hono";
import type { AppEnv } from "./context";
import { errorResponse } from "./errors";

/**
 * Registers, after a path's real routes, a catch-all that answers 405 with `Allow` for any other
 * method, so a wrong method is told apart from an unknown path.
 */
export function allowOnly(app: Hono<AppEnv, any, any>, path: string, methods: string[]): void {
  const allowed = methods.includes("GET") && !methods.includes("HEAD") ? [...methods, "HEAD"] : methods;
  app.all(path, (c) => {
    const res = errorResponse("METHOD_NOT_ALLOWED", `Method ${c.req.method} is not allowed here. Allowed: ${allowed.join(", ")}.`);
    res.headers.set("Allow", allowed.join(", "));
    return res;
  });
}
