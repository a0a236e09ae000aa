import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { and, eq, gt } from "drizzle-orm";
import { database } from "../db/client";
import { sessions } from "../db/schema";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { randomBytes, sha256Hex, toBase64Url, toHex } from "../lib/encoding";
import { SESSION_COOKIE, sessionCookiePrefix, sessionSetCookie } from "./session-cookie";

export { SESSION_COOKIE };
/** Sessions last a week from sign-in. */
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
/** A session's "last seen" is written again once it is this old, not on every request. */
export const LAST_SEEN_EVERY_MS = 60 * 1000;

declare module "hono" {
  interface ContextVariableMap {
    /** The signed-in console session: its public id (the sessions list's) and its CSRF token for forms. */
    session?: { id: string; csrfToken: string };
  }
}

function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

/** The session cookie's value, read under the name this scheme uses (session-cookie.ts). */
function sessionValue(c: Context): string | undefined {
  return getCookie(c, SESSION_COOKIE, sessionCookiePrefix(isHttps(c)));
}

/**
 * Starts a session for the account and sets its cookie (HttpOnly, SameSite=Lax; `__Host-`, Secure
 * on https); the session records the client address and user agent of `c`'s request for the
 * sessions list. Every way of signing in (password, passkey) ends here, once its checks passed.
 */
export async function startSession(c: Context<AppEnv>, accountId: string): Promise<void> {
  const value = toBase64Url(randomBytes(32));
  const now = c.get("deps").now();
  const csrfToken = toBase64Url(randomBytes(24));
  const id = toHex(randomBytes(16));
  const address = c.req.header("CF-Connecting-IP")?.slice(0, 64) ?? null;
  const userAgent = c.req.header("User-Agent")?.slice(0, 512) ?? null;
  await database(c.env)
    .insert(sessions)
    .values({ idHash: await sha256Hex(value), id, accountId, csrfToken, createdAt: now, expiresAt: now + SESSION_TTL_MS, lastSeenAt: now, address, userAgent });
  c.header("Set-Cookie", sessionSetCookie(isHttps(c), value, SESSION_TTL_MS / 1000), { append: true });
  c.set("accountId", accountId);
  c.set("session", { id, csrfToken });
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
  const now = c.get("deps").now();
  const idHash = await sha256Hex(value);
  const row = await database(c.env)
    .select({ id: sessions.id, accountId: sessions.accountId, csrfToken: sessions.csrfToken, lastSeenAt: sessions.lastSeenAt })
    .from(sessions)
    .where(and(eq(sessions.idHash, idHash), gt(sessions.expiresAt, now)))
    .get();
  if (!row) return false;
  if (now - (row.lastSeenAt ?? 0) >= LAST_SEEN_EVERY_MS) {
    await database(c.env).update(sessions).set({ lastSeenAt: now }).where(eq(sessions.idHash, idHash));
  }
  c.set("accountId", row.accountId);
  c.set("session", { id: row.id, csrfToken: row.csrfToken });
  return true;
}

/** JSON console routes: a session is required, else 401 UNAUTHORIZED. */
export const requireSession: MiddlewareHandler<AppEnv> = async function requireSession(c, next) {
  if (!(await loadSession(c))) throw new ApiError("UNAUTHORIZED", "Sign in to continue.");
  await next();
};
