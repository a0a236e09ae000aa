import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../../http/context";

/**
 * The console's Content-Security-Policy: only our own script and stylesheet (no inline code),
 * forms post only to us, nothing may frame the console.
 */
export const CONSOLE_CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'"],
  connectSrc: ["'self'"],
  formAction: ["'self'"],
  baseUri: ["'none'"],
  frameAncestors: ["'none'"],
};

const headers = secureHeaders({
  contentSecurityPolicy: CONSOLE_CSP,
  // Pages hold download links and token prefixes: never leak the URL onwards. The sign-in and
  // sign-up pages set their own, laxer policy (see AUTH_PAGE_REFERRER_POLICY).
  referrerPolicy: "no-referrer",
  xFrameOptions: "DENY",
  crossOriginOpenerPolicy: "same-origin",
  crossOriginResourcePolicy: "same-origin",
  // Browsers ignore HSTS on plain http (local runs); no includeSubDomains, apps live on subdomains.
  strictTransportSecurity: "max-age=31536000",
  permissionsPolicy: { camera: [], microphone: [], geolocation: [], payment: [] },
  // A page that chose its own Referrer-Policy keeps it.
  overwrite: false,
});

/**
 * The sign-in and sign-up pages hold no links worth hiding and have no session, so their forms
 * are vouched for by the `Origin` header alone; under `no-referrer` browsers would send
 * `Origin: null`. `same-origin` sends the origin to us and nothing to anyone else.
 */
export const AUTH_PAGE_REFERRER_POLICY = "same-origin";

/**
 * Secure headers for console pages, plus `Cache-Control: no-store` on HTML so a page that showed a
 * token secret or a signed link is never kept in a shared or back-forward cache.
 */
export const consoleSecureHeaders: MiddlewareHandler<AppEnv> = async function consoleSecureHeaders(c, next) {
  await headers(c, async () => {
    await next();
    if (c.res.headers.get("Content-Type")?.startsWith("text/html")) c.res.headers.set("Cache-Control", "no-store");
  });
};
