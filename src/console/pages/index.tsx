import { type Context, Hono, type MiddlewareHandler } from "hono";
import { csrfGuard } from "../../auth/csrf";
import { loadSession } from "../../auth/session";
import type { AppEnv } from "../../http/context";
import { consoleBodyLimit } from "../../http/body-limit";
import { ApiError } from "../../http/errors";
import { onError } from "../../http/on-error";
import { appPages } from "./app-pages";
import { appTabPages } from "./app-tab-pages";
import { assetRoutes } from "./assets";
import { pushPages } from "./push-pages";
import { metricsPages } from "./metrics-page";
import { envPages } from "./env-pages";
import { authPages } from "./auth-pages";
import { billingPages } from "./billing-page";
import { notificationPages } from "./notifications-page";
import { databasePages } from "./database-pages";
import { domainPages } from "./domain-pages";
import { exportPages } from "./exports-section";
import { HOME_PATH } from "./format";
import { Layout, render } from "./layout";
import { passkeyPages } from "./passkeys-section";
import { profilePages } from "./profile-pages";
import { securityLogPages } from "./security-log-page";
import { consoleSecureHeaders } from "./secure-headers";

/** Pages that need a signed-in viewer send everyone else to sign in, then back here. */
const requirePageSession: MiddlewareHandler<AppEnv> = async function requirePageSession(c, next) {
  if (c.get("session") || (await loadSession(c))) return next();
  const url = new URL(c.req.url);
  const back = c.req.method === "GET" ? `?next=${encodeURIComponent(url.pathname + url.search)}` : "";
  return c.redirect(`/console/signin${back}`, 303);
};

const TITLES: Record<number, string> = {
  403: "Request refused",
  413: "Request too large",
  429: "Too many attempts",
  404: "Not found",
  500: "Something went wrong",
};

/**
 * Errors on console pages become pages: the sentence the JSON routes would send, a way back, and
 * for unexpected failures the request id (the JSON handler logs them, so the log is the same).
 */
function errorPage(err: Error, c: Context<AppEnv>): Response | Promise<Response> {
  const json = onError(err, c);
  const status = json.status as 403 | 404 | 413 | 429 | 500;
  const sentence = err instanceof ApiError && status < 500 ? err.message : "Something went wrong on our side.";
  return render(
    c,
    <Layout title={TITLES[status] ?? "Request refused"} narrow>
      <div class="card">
        <h1>{TITLES[status] ?? "Request refused"}</h1>
        <p>{sentence}</p>
        {status >= 500 && (
          <p class="hint">
            Quote request id <code>{c.get("requestId")}</code> when you contact support.
          </p>
        )}
        <p>
          <a href={HOME_PATH}>Back to your databases</a>
        </p>
      </div>
    </Layout>,
    status,
  );
}

/**
 * Where the pages live, below /console. Middleware is bound to these and not to `/console/*`, so
 * it never touches the JSON routes under /console/api (nor their route name in the request log).
 */
const PAGE_PATHS = ["/", "/signin", "/signup", "/signout", "/profile", "/profile/*", "/databases", "/databases/*", "/apps", "/apps/*", "/billing", "/notifications", "/notifications/*", "/assets/*"];

/**
 * The console's web pages under /console: server-rendered HTML forms that work without any
 * script. Mounted after /console/api, whose JSON routes answer first.
 */
export const consolePages = new Hono<AppEnv>();
for (const path of PAGE_PATHS) consolePages.use(path, consoleSecureHeaders, consoleBodyLimit(), csrfGuard());
consolePages.route("/assets", assetRoutes);
for (const path of ["/databases", "/databases/*", "/apps", "/apps/*", "/billing", "/notifications", "/notifications/*", "/profile", "/profile/*"]) consolePages.use(path, requirePageSession);

consolePages.get("/", async (c) => c.redirect((await loadSession(c)) ? HOME_PATH : "/console/signin", 303));
consolePages.route("/", authPages);
consolePages.route("/profile", profilePages);
consolePages.route("/profile", passkeyPages);
consolePages.route("/profile", securityLogPages);
consolePages.route("/databases", databasePages);
consolePages.route("/databases", exportPages);
consolePages.route("/apps", appPages);
consolePages.route("/apps", appTabPages);
consolePages.route("/apps", domainPages);
consolePages.route("/apps", envPages);
consolePages.route("/apps", pushPages);
consolePages.route("/apps", metricsPages);
consolePages.route("/billing", billingPages);
consolePages.route("/notifications", notificationPages);
consolePages.onError(errorPage);
