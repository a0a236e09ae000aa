import type { Context } from "hono";

/**
 * Sets `headers` on the reply already made. Hono's `c.header` after the reply exists builds a new
 * Response around it on every call (so that it never writes into headers it cannot change), which
 * cost a poll three Response copies: the rate-limit fields and the request id. Every reply the
 * Worker builds itself is a fresh Response with headers of its own, so they are set in place; a
 * reply whose headers cannot change (one passed through from `fetch`, such as an app's) throws on
 * the first set, and is then copied once by Hono as before.
 */
export function setReplyHeaders(c: Context, headers: Record<string, string>): void {
  const target = c.res.headers;
  try {
    for (const name in headers) target.set(name, headers[name]!);
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    for (const name in headers) c.header(name, headers[name]!);
  }
}
