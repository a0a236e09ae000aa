import type { MiddlewareHandler } from "hono";
import { appBySubdomain } from "../apps/store";
import type { AppEnv } from "../http/context";
import { describeError, log } from "../http/log";
import { customHostnameRoute } from "./custom-hosts";
import { appSubdomainOf } from "./hosts";

/** Headers that describe one hop and must not be passed on (RFC 9110, 7.6.1). */
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"];

function notice(status: 404 | 502 | 503, title: string, text: string): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:15vh auto;max-width:32rem;padding:0 1rem;color:#1f2328}h1{font-size:1.4rem}</style></head>
<body><h1>${title}</h1><p>${text}</p></body></html>`;
  return new Response(html, {
    status,
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", ...(status === 503 ? { "Retry-After": "30" } : {}) },
  });
}

/**
 * Requests for an app hostname, or for a custom domain routed to an app (`Active`, or `Verifying…`
 * with its route in place), are passed to the app's live instance, streaming both ways (no
 * buffering); the console and the API never see them. An app hostname with no app answers 404, a
 * stopped app or one not deployed yet 503. Any other host (a removed or unknown custom hostname
 * among them) reaches the console and the API, where `/` answers 404.
 */
export function appProxy(): MiddlewareHandler<AppEnv> {
  return async function appProxy(c, next) {
    // Workers give every request a URL whose host is the Host header; a Request made in code may
    // carry no Host header at all.
    const host = c.req.header("Host") ?? new URL(c.req.url).host;
    const subdomain = appSubdomainOf(host, c.get("config").APPS_DOMAIN);
    const app = subdomain === null ? await customHostnameRoute(c.env, host) : await appBySubdomain(c.env, subdomain);
    if (subdomain === null && !app) return next();
    if (!app) return notice(404, "No app here", "No app answers at this address.");
    if (app.status === "stopped") return notice(503, "App stopped", "This app is stopped. Its owner can start it again from the console.");
    if (app.status !== "running" || !app.instanceUrl) return notice(503, "Not deployed yet", "This app has not been deployed yet.");

    const incoming = new URL(c.req.url);
    const headers = new Headers(c.req.raw.headers);
    for (const name of HOP_BY_HOP) headers.delete(name);
    headers.set("X-Forwarded-Host", c.req.header("Host") ?? incoming.host);
    headers.set("X-Forwarded-Proto", incoming.protocol.replace(":", ""));
    const client = c.req.header("CF-Connecting-IP");
    if (client) headers.set("X-Forwarded-For", client);
    try {
      const res = await fetch(`${app.instanceUrl}${incoming.pathname}${incoming.search}`, {
        method: c.req.method,
        headers,
        body: c.req.raw.body,
        redirect: "manual",
      });
      return new Response(res.body, res);
    } catch (err) {
      log("warn", "app instance did not answer", { app_id: app.id, ...describeError(err) });
      return notice(502, "App not answering", "This app is running but did not answer. Try again in a moment.");
    }
  };
}
