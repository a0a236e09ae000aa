import { Hono } from "hono";
import { createApiV1 } from "./api/v1";
import { DOWNLOAD_PATH, downloadRoutes } from "./api/v1/download";
import { csrfGuard, requireSession } from "./auth/session";
import { appRoutes } from "./console/api/apps";
import { authRoutes } from "./console/api/auth";
import { consolePages } from "./console/pages";
import { databaseRoutes } from "./console/api/databases";
import { tokenRoutes } from "./console/api/tokens";
import { type AppEnv, type Deps, defaultDeps } from "./http/context";
import { errorResponse } from "./http/errors";
import { allowOnly } from "./http/method-guard";
import { onError } from "./http/on-error";
import { requestContext } from "./http/request-context";
import { appProxy } from "./routing/app-proxy";

/**
 * The Worker's HTTP side. Middleware order: request context (id, config, log line) first, then
 * per-area guards (CSRF and session for the console, rate limit and token for the API).
 */
export function createApp(deps: Deps = defaultDeps) {
  const app = new Hono<AppEnv>();
  app.use(requestContext(deps));
  // App hostnames are served before anything else: the console and API never see them.
  app.use(appProxy());
  app.get("/healthz", (c) => c.json({ ok: true }));

  const consoleApi = new Hono<AppEnv>();
  consoleApi.use(csrfGuard());
  consoleApi.route("/", authRoutes);
  consoleApi.use("/tokens/*", requireSession);
  consoleApi.use("/tokens", requireSession);
  consoleApi.use("/databases/*", requireSession);
  consoleApi.use("/databases", requireSession);
  consoleApi.route("/tokens", tokenRoutes);
  consoleApi.use("/apps/*", requireSession);
  consoleApi.use("/apps", requireSession);
  consoleApi.route("/databases", databaseRoutes);
  consoleApi.route("/apps", appRoutes);
  app.route("/console/api", consoleApi);

  allowOnly(app, "/console/api/signup", ["POST"]);
  allowOnly(app, "/console/api/login", ["POST"]);
  allowOnly(app, "/console/api/logout", ["POST"]);
  allowOnly(app, "/console/api/tokens", ["GET", "POST"]);
  allowOnly(app, "/console/api/tokens/:id", ["DELETE"]);
  allowOnly(app, "/console/api/databases", ["GET", "POST"]);
  allowOnly(app, "/console/api/databases/:id", ["DELETE"]);
  allowOnly(app, "/console/api/databases/:id/sql", ["POST"]);
  allowOnly(app, "/console/api/apps", ["GET", "POST"]);
  allowOnly(app, "/console/api/apps/:id", ["GET", "PATCH", "DELETE"]);
  for (const action of ["deploy", "stop", "start", "restart", "plan"]) allowOnly(app, `/console/api/apps/:id/${action}`, ["POST"]);
  allowOnly(app, "/console/api/apps/:id/deploys", ["GET"]);
  allowOnly(app, "/console/api/apps/:id/deploys/:deployId/log", ["GET"]);
  app.route("/console", consolePages);

  app.route("/", createApiV1());
  app.route("/", downloadRoutes);
  allowOnly(app, "/api/v1/dbs/:id/export", ["POST"]);
  allowOnly(app, DOWNLOAD_PATH, ["GET", "HEAD"]);
  allowOnly(app, "/api/v1/openapi.json", ["GET"]);
  allowOnly(app, "/docs", ["GET"]);

  app.notFound(() => errorResponse("NOT_FOUND", "There is nothing at this address."));
  app.onError(onError);
  return app;
}
