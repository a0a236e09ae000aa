import type { MiddlewareHandler } from "hono";
import { appBySubdomain } from "../apps/store";
import type { AppEnv } from "../http/context";
import { describeError, log } from "../http/log";
import { appSubdomainOf } from "./hosts";
import { type Route, RouteCache } from "./route-cache";

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

type Lookup = Route | Response;

/** The app at `subdomain` as D1 has it now: where it runs, or the page to answer instead. */
async function lookUp(env: Env, subdomain: string): Promise<Lookup> {
  const app = await appBySubdomain(env, subdomain);
  if (!app) return notice(404, "No app here", "No app answers at this address.");
  if (app.status === "stopped") return notice(503, "App stopped", "This app is stopped. Its owner can start it again from the console.");
  if (app.status !== "running" || !app.instanceUrl) return notice(503, "Not deployed yet", "This app has not been deployed yet.");
  return { appId: app.id, instanceUrl: app.instanceUrl };
}

/**
 * Requests for an app hostname are passed to the app's live instance, streaming both ways (no
 * buffering); the console and the API never see them. A hostname with no app answers 404, a
 * stopped app or one not deployed yet 503. Where a running app leads is remembered for a moment
 * (route-cache.ts); when a remembered instance does not answer, D1 is read again and the request
 * answered from what it says now (sent again to the new instance when it has no body).
 */
export function appProxy(routes = new RouteCache()): MiddlewareHandler<AppEnv> {
  return async function appProxy(c, next) {
    // Workers give every request a URL whose host is the Host header; a Request made in code may
    // carry no Host header at all.
    const subdomain = appSubdomainOf(c.req.header("Host") ?? new URL(c.req.url).host, c.get("config").APPS_DOMAIN);
    if (subdomain === null) return next();
    const now = c.get("deps").now();
    let route = routes.get(subdomain, now);
    const remembered = route !== null;
    if (!route) {
      const found = await lookUp(c.env, subdomain);
      if (found instanceof Response) return found;
      route = found;
      routes.set(subdomain, route, now);
    }
    const hasBody = c.req.raw.body !== null;
    try {
      return await forward(c.req.raw, c.req.header("Host"), route.instanceUrl);
    } catch (err) {
      if (remembered) {
        routes.forget(subdomain);
        const fresh = await lookUp(c.env, subdomain);
        if (fresh instanceof Response) return fresh;
        routes.set(subdomain, fresh, c.get("deps").now());
        if (fresh.instanceUrl !== route.instanceUrl && !hasBody) {
          return forward(c.req.raw, c.req.header("Host"), fresh.instanceUrl).catch((again: unknown) => notAnswering(fresh.appId, again));
        }
      }
      return notAnswering(route.appId, err);
    }
  };
}

function notAnswering(appId: string, err: unknown): Response {
  log("warn", "app instance did not answer", { app_id: appId, ...describeError(err) });
  return notice(502, "App not answering", "This app is running but did not answer. Try again in a moment.");
}

/** One request to the instance, with hop-by-hop headers dropped and the forwarding headers set. */
async function forward(req: Request, hostHeader: string | undefined, instanceUrl: string): Promise<Response> {
  const incoming = new URL(req.url);
  const headers = new Headers(req.headers);
  for (const name of HOP_BY_HOP) headers.delete(name);
  headers.set("X-Forwarded-Host", hostHeader ?? incoming.host);
  headers.set("X-Forwarded-Proto", incoming.protocol.replace(":", ""));
  const client = req.headers.get("CF-Connecting-IP");
  if (client) headers.set("X-Forwarded-For", client);
  const res = await fetch(`${instanceUrl}${incoming.pathname}${incoming.search}`, {
    method: req.method,
    headers,
    body: req.body,
    redirect: "manual",
  });
  return new Response(res.body, res);
}
