import { generateCookie } from "hono/cookie";

/**
 * The console's session cookie. Served over https it is `__Host-session`: browsers accept a
 * `__Host-` cookie only when it is Secure, has Path=/ and no Domain, so it belongs to the console's
 * own host alone and no app hostname (`<sub>.<APPS_DOMAIN>`, a custom domain) can plant or
 * overwrite one, even one under the same parent domain. Over https a plain `session` cookie is
 * never read. Over plain http (local development) browsers refuse Secure cookies, so the cookie
 * is `session` without the prefix; there every host is loopback and one person's anyway.
 */

export const SESSION_COOKIE = "session";

/** The cookie's name as the browser stores it. */
export function sessionCookieName(https: boolean): string {
  return https ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE;
}

/** The prefix hono's cookie helpers take (they then force Secure, Path=/ and no Domain). */
export function sessionCookiePrefix(https: boolean): "host" | undefined {
  return https ? "host" : undefined;
}

/** The `Set-Cookie` value that sets (maxAge > 0) or clears (0) the session cookie. */
export function sessionSetCookie(https: boolean, value: string, maxAgeSeconds: number): string {
  return generateCookie(SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: "Lax",
    secure: https,
    path: "/",
    maxAge: maxAgeSeconds,
    prefix: sessionCookiePrefix(https),
  });
}
