import type { MiddlewareHandler } from "hono";
import { loadSession } from "../../auth/session";
import type { AppEnv } from "../../http/context";
import { ApiError } from "../../http/errors";
import { sha256Hex } from "../../lib/encoding";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF protection for console forms. Signed-in pages are served with `Referrer-Policy:
 * no-referrer`, and under that policy browsers send `Origin: null` on the page's form posts, so
 * the origin cannot vouch for them: such a post must carry the session's token in `_csrf` (every
 * signed-in form does). A real `Origin` must be our own. The sign-in and sign-up pages have no
 * session yet; they are served with `Referrer-Policy: same-origin`, so their posts carry our
 * origin.
 */
export function pageCsrfGuard(): MiddlewareHandler<AppEnv> {
  return async function pageCsrfGuard(c, next) {
    if (SAFE_METHODS.has(c.req.method)) return next();
    const origin = c.req.header("Origin");
    if (origin !== undefined && origin !== "null") {
      if (origin === new URL(c.req.url).origin) return next();
      throw new ApiError("CSRF_REJECTED", "This request came from another site and was refused.");
    }
    const expected = (await loadSession(c)) ? c.get("session")?.csrfToken : undefined;
    const given = await formField(c.req.header("Content-Type"), () => c.req.parseBody());
    // Hashing both sides first makes the comparison take the same time wherever they differ.
    if (expected && given && (await sha256Hex(given)) === (await sha256Hex(expected))) return next();
    throw new ApiError("CSRF_REJECTED", "The form expired or came from another site. Reload the page and try again.");
  };
}

async function formField(type: string | undefined, parse: () => Promise<Record<string, unknown>>): Promise<string | undefined> {
  if (!type?.startsWith("application/x-www-form-urlencoded") && !type?.startsWith("multipart/form-data")) return undefined;
  const value = (await parse())["_csrf"];
  return typeof value === "string" ? value : undefined;
}
