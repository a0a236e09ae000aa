import { Hono } from "hono";
import { createApiV1 } from "./api/v1";
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

/**
 * The Worker's HTTP side. Middleware order: request context (id, config, log line) first, then
 * the 405 guard (it acts on the reply), then per-area guards (CSRF and session for the console,
 * rate limit and token for the API).
 */
export function createApp(deps: Deps = defaultDeps) {
  const app = new Hono<AppEnv>();
  app.use(requestContext(deps));
  // App hostnames are served before anything else: the console and API never see them.
  app.use(appProxy());
  app.use(methodGuard(app));
  app.get("/healthz", (c) => c.json({ ok: true }));

  const consoleApi = new Hono<AppEnv>();
  consoleApi.use(consoleBodyLimit(), csrfGuard());
  consoleApi.route("/", authRoutes);
  for (const path of ["/tokens", "/tokens/*", "/databases", "/databases/*", "/apps", "/apps/*", "/wallet"]) consoleApi.use(path, requireSession);
  consoleApi.route("/tokens", tokenRoutes);
  consoleApi.route("/databases", databaseRoutes);
  consoleApi.route("/apps", appRoutes);
  consoleApi.route("/apps", domainRoutes);
  consoleApi.route("/apps", envRoutes);
  consoleApi.route("/apps", webhookSecretRoutes);
  consoleApi.route("/wallet", walletRoutes);
  app.route("/console/api", consoleApi);
  app.route("/console", consolePages);
  app.route("/admin/api", adminRoutes);
  app.route("/admin/api", runtimeReportRoutes);
  // Deploy on push: public, outside the console's session and CSRF guards; the signature is the credential.
  app.route("/webhooks", webhookRoutes);
  app.route("/", createApiV1());

  app.notFound(() => errorResponse("NOT_FOUND", "There is nothing at this address."));
  app.onError(onError);
  return app;
}
