import type { Context, MiddlewareHandler } from "hono";
import { appBySubdomain } from "../apps/store";
import type { AppEnv } from "../http/context";
import { describeError, log } from "../http/log";
import { MetricsCollector } from "../metrics/collector";
import { type CountContext, countAnswer } from "../metrics/proxy-count";
import { keepCookiesHome } from "./cookie-domain";
import { customHostnameRoute } from "./custom-hosts";
import { appSubdomainOf } from "./hosts";
import { InstanceTimeout, fetchInstance } from "./instance-fetch";
import { followInstance } from "./instance-follow";
import { instanceTarget } from "./instance-target";
import { type Route, RouteCache } from "./route-cache";

function notice(status: 404 | 502 | 503 | 504, title: string, text: string): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:15vh auto;max-width:32rem;padding:0 1rem;color:#1f2328}h1{font-size:1.4rem}</style></head>
<body><h1>${title}</h1><p>${text}</p></body></html>`;
  return new Response(html, {
    status,
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", ...(status === 503 ? { "Retry-After": "30" } : {}) },
  });
}

type Lookup = Route | Response;

/** An app's own hostname (`<subdomain>.<APPS_DOMAIN>`), or any other host: maybe a custom domain. */
type Target = { kind: "app"; subdomain: string } | { kind: "custom"; host: string };

/**
 * The app the target leads to as D1 has it now: where it runs, or the page to answer instead;
 * null for a host that is no routed custom domain (the console and the API answer it).
 */
async function lookUp(env: Env, target: Target): Promise<Lookup | null> {
  const app = target.kind === "app" ? await appBySubdomain(env, target.subdomain) : await customHostnameRoute(env, target.host);
  if (!app && target.kind === "custom") return null;
  if (!app) return notice(404, "No app here", "No app answers at this address.");
  if (app.status === "stopped") return notice(503, "App stopped", "This app is stopped. Its owner can start it again from the console.");
  if (app.status !== "running" || !app.instanceUrl) return notice(503, "Not deployed yet", "This app has not been deployed yet.");
  return { appId: app.id, instanceId: app.instanceId, instanceUrl: app.instanceUrl, engine: app.instanceEngine, node: app.instanceNode, port: app.instancePort };
}

/**
 * Requests for an app hostname, or for a custom domain routed to an app (`Active`, or `Verifying…`
 * with its route in place), are passed to the app's live instance, streaming both ways (no
 * buffering); the console and the API never see them. An app hostname with no app answers 404, a
 * stopped app or one not deployed yet 503. Any other host (a removed or unknown custom hostname
 * among them) reaches the console and the API, where `/` answers 404. Where a running app's own
 * hostname leads is remembered for a moment (route-cache.ts; custom domains are not, so a removal
 * takes effect at once); when a remembered instance does not answer, D1 is read again and the
 * request answered from what it says now (sent again to the new instance when it has no body).
 * Headers are rewritten by forward-headers.ts, and a cookie set for every app made host-only by
 * cookie-domain.ts; an instance that sends no response headers within
 * PROXY_HEADER_TIMEOUT_SECONDS gets the 504 page (instance-fetch.ts), and nothing cuts an exchange
 * once its headers are in.
 */
export function appProxy(routes = new RouteCache(), metrics = new MetricsCollector()): MiddlewareHandler<AppEnv> {
  return async function appProxy(c, next) {
    // Workers give every request a URL whose host is the Host header; a Request made in code may
    // carry no Host header at all.
    const host = c.req.header("Host") ?? new URL(c.req.url).host;
    const subdomain = appSubdomainOf(host, c.get("config").APPS_DOMAIN);
    const target: Target = subdomain === null ? { kind: "custom", host } : { kind: "app", subdomain };
    const now = c.get("deps").now();
    let route = subdomain === null ? null : routes.get(subdomain, now);
    const remembered = route !== null;
    if (!route) {
      const found = await lookUp(c.env, target);
      if (found === null) return next();
      if (found instanceof Response) return found;
      route = found;
      if (subdomain !== null) routes.set(subdomain, route, now);
    }
    const hasBody = c.req.raw.body !== null;
    const config = c.get("config");
    const timeoutMs = config.PROXY_HEADER_TIMEOUT_SECONDS * 1000;
    const nodeProxy = { url: config.NODE_PROXY_URL, clientId: config.RUNTIME_ACCESS_CLIENT_ID, clientSecret: config.RUNTIME_ACCESS_CLIENT_SECRET };
    const counting: CountContext | null = config.METRICS_COLLECTION ? { env: c.env, collector: metrics, flushSeconds: config.METRICS_FLUSH_SECONDS, waitUntil: waitUntilOf(c) } : null;
    const count = (appId: string, res: Response, latencyMs: number | null) => (counting ? countAnswer(counting, appId, res, latencyMs, Date.now()) : res);
    const forward = async (to: Route) => {
      const sent = Date.now();
      const res = keepCookiesHome(await fetchInstance(c.req.raw, c.req.header("Host"), instanceTarget(to, nodeProxy), timeoutMs), config.APPS_DOMAIN);
      return count(to.appId, res, Date.now() - sent);
    };
    try {
      return await forward(route);
    } catch (err) {
      if (err instanceof InstanceTimeout) return count(route.appId, tooSlow(route.appId, err), null);
      // Where the app answers now: D1 again when the route was remembered (a switch happened
      // meanwhile), then the engine when the instance may have moved by itself (a swarm task).
      if (subdomain !== null) routes.forget(subdomain);
      let fresh: Lookup | null = route;
      if (remembered) {
        fresh = await lookUp(c.env, target);
        if (fresh === null) return next();
        if (fresh instanceof Response) return fresh;
      }
      if (fresh.instanceUrl === route.instanceUrl) fresh = (await followInstance(c.env, fresh, c.get("deps").now())) ?? fresh;
      if (subdomain !== null) routes.set(subdomain, fresh, c.get("deps").now());
      if (fresh.instanceUrl !== route.instanceUrl && !hasBody) {
        const again = fresh;
        return forward(again).catch((error: unknown) => count(again.appId, error instanceof InstanceTimeout ? tooSlow(again.appId, error) : notAnswering(again.appId, error), null));
      }
      return count(route.appId, notAnswering(route.appId, err), null);
    }
  };
}

/** The request's `waitUntil`, or null for a request made in code without an execution context. */
function waitUntilOf(c: Context<AppEnv>): ((work: Promise<unknown>) => void) | null {
  try {
    const ctx = c.executionCtx;
    return (work) => ctx.waitUntil(work);
  } catch {
    return null;
  }
}

function notAnswering(appId: string, err: unknown): Response {
  log("warn", "app instance did not answer", { app_id: appId, ...describeError(err) });
  return notice(502, "App not answering", "This app is running but did not answer. Try again in a moment.");
}

function tooSlow(appId: string, err: InstanceTimeout): Response {
  log("warn", "app instance answered too slowly", { app_id: appId, timeout_seconds: err.seconds });
  return notice(504, "App took too long", `This app did not start answering within ${err.seconds} seconds. Try again in a moment.`);
}
