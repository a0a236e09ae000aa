import { Hono } from "hono";
import { createApiV1 } from "./api/v1";
import { auditTrail } from "./audit/trail";
import { csrfGuard } from "./auth/csrf";
import { requireSession } from "./auth/session";
import { adminRoutes } from "./admin/credits";
import { runtimeReportRoutes } from "./admin/runtime-report";
import { appRoutes } from "./console/api/apps";
import { authRoutes } from "./console/api/auth";
import { consolePages } from "./console/pages";
import { databaseRoutes } from "./console/api/databases";
import { domainRoutes } from "./console/api/domains";
import { envRoutes } from "./console/api/env";
import { metricsRoutes } from "./console/api/metrics";
import { notificationRoutes } from "./console/api/notifications";
import { consoleRouter, serveConsoleDocument } from "./console/api/openapi";
import { securityRoutes } from "./console/api/security";
import { auditRoutes } from "./console/api/audit";
import { passkeyRoutes } from "./console/api/passkeys";
import { tokenRoutes } from "./console/api/tokens";
import { walletRoutes } from "./console/api/wallet";
import { webhookSecretRoutes } from "./console/api/webhook";
import { webhookRoutes } from "./webhooks/route";
import { consoleBodyLimit } from "./http/body-limit";
import { type AppEnv, type Deps, defaultDeps } from "./http/context";
import { errorResponse } from "./http/errors";
import { methodGuard } from "./http/method-guard";
import { onError } from "./http/on-error";
import { requestContext } from "./http/request-context";
import { appProxy } from "./routing/app-proxy";
import { RouteCache } from "./routing/route-cache";

/**
 * The Worker's HTTP side. Middleware order: request context (id, config, log line) first, then
 * the 405 guard (it acts on the reply), then per-area guards (CSRF and session for the console,
 * rate limit and token for the API).
 *
 * Requests under `/api/v1/` are answered by an app holding only the front middleware and the
 * public API: with the console's 160 routes beside them, Hono's fast RegExpRouter cannot take the
 * route set (a static segment beside a parameter, `/apps/new` and `/apps/:id`), so the whole app
 * routes through a tree, the largest single cost of a poll. The whole app keeps the API's routes
 * too, so what it lists (and the 405 guard derived from it) is unchanged.
 */
export function createApp(deps: Deps = defaultDeps) {
  const routes = new RouteCache();
  const app = front(new Hono<AppEnv>(), deps, routes);
  app.get("/healthz", (c) => c.json({ ok: true }));

  const consoleApi = consoleRouter();
  consoleApi.use(consoleBodyLimit(), csrfGuard());
  consoleApi.route("/", authRoutes);
  for (const path of ["/tokens", "/tokens/*", "/databases", "/databases/*", "/apps", "/apps/*", "/wallet", "/notifications/*"]) consoleApi.use(path, requireSession);
  consoleApi.route("/tokens", tokenRoutes);
  consoleApi.route("/databases", databaseRoutes);
  consoleApi.route("/apps", appRoutes);
  consoleApi.route("/apps", domainRoutes);
  consoleApi.route("/apps", envRoutes);
  consoleApi.route("/apps", webhookSecretRoutes);
  consoleApi.route("/apps", metricsRoutes);
  consoleApi.route("/wallet", walletRoutes);
  consoleApi.route("/notifications", notificationRoutes);
  for (const path of ["/sessions", "/sessions/*", "/password", "/totp/*"]) consoleApi.use(path, requireSession);
  consoleApi.route("/", securityRoutes);
  consoleApi.route("/passkeys", passkeyRoutes);
  consoleApi.route("/audit", auditRoutes);
  serveConsoleDocument(consoleApi);
  app.route("/console/api", consoleApi);
  app.route("/console", consolePages);
  app.route("/admin/api", adminRoutes);
  app.route("/admin/api", runtimeReportRoutes);
  // Deploy on push: public, outside the console's session and CSRF guards; the signature is the credential.
  app.route("/webhooks", webhookRoutes);
  app.route("/", createApiV1());
  back(app);

  const api = createApiApp(deps, routes);
  const whole = app.fetch;
  app.fetch = (request, ...rest) => (isApiPath(request.url) ? api.fetch(request, ...rest) : whole(request, ...rest));
  return app;
}

/** The app answering `/api/v1/`: the front middleware and the public API alone (see createApp). */
export function createApiApp(deps: Deps = defaultDeps, routes = new RouteCache()) {
  return back(front(new Hono<AppEnv>(), deps, routes).route("/", createApiV1()));
}

/** What every request meets first: its context, app hostnames (served before anything else: the console and API never see them), the 405 guard. */
function front(app: Hono<AppEnv>, deps: Deps, routes: RouteCache): Hono<AppEnv> {
  app.use(requestContext(deps));
  app.use(appProxy(routes));
  app.use(methodGuard(app));
  app.use(auditTrail());
  return app;
}

/** What answers a request nothing matched, and a thrown error. */
function back(app: Hono<AppEnv>): Hono<AppEnv> {
  app.notFound(() => errorResponse("NOT_FOUND", "There is nothing at this address."));
  app.onError(onError);
  return app;
}

/** Whether an absolute URL's path is under `/api/v1/`, without parsing the whole URL. */
export function isApiPath(url: string): boolean {
  const scheme = url.indexOf("://");
  const path = url.indexOf("/", scheme === -1 ? 0 : scheme + 3);
  return path !== -1 && url.startsWith("/api/v1/", path);
}
