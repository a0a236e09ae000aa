import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { sha256Hex } from "../lib/encoding";
import { loadSession } from "./session";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF protection for every state-changing console request, JSON routes and pages alike.
 *
 * A real `Origin` (browsers send one on every POST) must be our own. `Origin: null` vouches for
 * nothing: signed-in pages are served with `Referrer-Policy: no-referrer`, under which browsers
 * post forms with `Origin: null`. Such a request, like one without `Origin` (a script), must
 * carry the session's CSRF token in `X-CSRF-Token` or the `_csrf` form field. The body is read
 * only once a session is known, and only after the console's body limit.
 */
export function csrfGuard(): MiddlewareHandler<AppEnv> {
  return async function csrfGuard(c, next) {
    if (SAFE_METHODS.has(c.req.method)) return next();
    const origin = c.req.header("Origin");
    if (origin !== undefined && origin !== "null") {
      if (origin === new URL(c.req.url).origin) return next();
      throw new ApiError("CSRF_REJECTED", "This request came from another site and was refused.");
    }
    const expected = c.get("session")?.csrfToken ?? ((await loadSession(c)) ? c.get("session")?.csrfToken : undefined);
    const given = expected ? (c.req.header("X-CSRF-Token") ?? (await formCsrfField(c))) : undefined;
    // Hashing both sides first makes the comparison take the same time wherever they differ.
    if (expected && given && (await sha256Hex(given)) === (await sha256Hex(expected))) return next();
    throw new ApiError("CSRF_REJECTED", "The form expired or came from another site. Reload the page and try again.");
  };
}

async function formCsrfField(c: Context): Promise<string | undefined> {
  const type = c.req.header("Content-Type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded") && !type.startsWith("multipart/form-data")) return undefined;
  const field = (await c.req.parseBody())["_csrf"];
  return typeof field === "string" ? field : undefined;
}
