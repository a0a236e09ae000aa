import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { and, eq, gt } from "drizzle-orm";
import { database } from "../db/client";
import { sessions } from "../db/schema";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { randomBytes, sha256Hex, toBase64Url } from "../lib/encoding";
import { SESSION_COOKIE, sessionCookiePrefix, sessionSetCookie } from "./session-cookie";

export { SESSION_COOKIE };
/** Sessions last a week from sign-in. */
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

declare module "hono" {
  interface ContextVariableMap {
    /** The signed-in console session: its CSRF token for forms. */
    session?: { csrfToken: string };
  }
}

function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

/** The session cookie's value, read under the name this scheme uses (session-cookie.ts). */
function sessionValue(c: Context): string | undefined {
  return getCookie(c, SESSION_COOKIE, sessionCookiePrefix(isHttps(c)));
}

/** Starts a session for the account and sets its cookie (HttpOnly, SameSite=Lax; `__Host-`, Secure on https). */
export async function startSession(c: Context<AppEnv>, accountId: string): Promise<void> {
  const value = toBase64Url(randomBytes(32));
  const now = c.get("deps").now();
  const csrfToken = toBase64Url(randomBytes(24));
  await database(c.env)
    .insert(sessions)
    .values({ idHash: await sha256Hex(value), accountId, csrfToken, createdAt: now, expiresAt: now + SESSION_TTL_MS });
  c.header("Set-Cookie", sessionSetCookie(isHttps(c), value, SESSION_TTL_MS / 1000), { append: true });
  c.set("accountId", accountId);
  c.set("session", { csrfToken });
}

/** Ends the current session, if any, and clears its cookie. */
export async function endSession(c: Context<AppEnv>): Promise<void> {
  const value = sessionValue(c);
  if (value) await database(c.env).delete(sessions).where(eq(sessions.idHash, await sha256Hex(value)));
  c.header("Set-Cookie", sessionSetCookie(isHttps(c), "", 0), { append: true });
}

/** Loads the session named by the cookie into the context; false when there is none. */
export async function loadSession(c: Context<AppEnv>): Promise<boolean> {
  const value = sessionValue(c);
  if (!value || value.length > 100) return false;
  const row = await database(c.env)
    .select({ accountId: sessions.accountId, csrfToken: sessions.csrfToken })
    .from(sessions)
    .where(and(eq(sessions.idHash, await sha256Hex(value)), gt(sessions.expiresAt, c.get("deps").now())))
    .get();
  if (!row) return false;
  c.set("accountId", row.accountId);
  c.set("session", { csrfToken: row.csrfToken });
  return true;
}

/** JSON console routes: a session is required, else 401 UNAUTHORIZED. */
export const requireSession: MiddlewareHandler<AppEnv> = async function requireSession(c, next) {
  if (!(await loadSession(c))) throw new ApiError("UNAUTHORIZED", "Sign in to continue.");
  await next();
};
