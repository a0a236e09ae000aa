/**
 * The busybox httpd app the request rows load: one repository on the bench's forge, deployed
 * through a control plane's console like a user would, once per control plane that serves it.
 */
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { createRepository } from "../dev-forge";
import { creditAccount } from "../lib/seed";
import { type AppJson, PLAN, Session, appFiles, deployThroughWorker, settledOnOne } from "./apps";
import { appContainers } from "./apps-docker";

/**
 * Two CGIs of the bench app, the same but for one header: `cookie` sets a cookie for every app
 * under APPS_DOMAIN (localhost here), which the proxy's cookie rule rewrites; `plain` sets none.
 */
const COOKIE_CGI = "www/cgi-bin/cookie";
const COOKIE_SCRIPT = '#!/bin/busybox sh\nprintf "Set-Cookie: seen=1; Path=/; Domain=localhost; HttpOnly\\r\\nContent-Type: text/plain\\r\\n\\r\\nok\\n"\n';
const PLAIN_CGI = "www/cgi-bin/plain";
const PLAIN_SCRIPT = '#!/bin/busybox sh\nprintf "Content-Type: text/plain\\r\\n\\r\\nok\\n"\n';

/** The app's repository (the static page, busybox, and the two CGIs) on the forge; its clone URL. */
export async function benchRepository(forgeRoot: string, forgeUrl: string): Promise<string> {
  const files = { ...appFiles(readFileSync("/bin/busybox")), [COOKIE_CGI]: COOKIE_SCRIPT, [PLAIN_CGI]: PLAIN_SCRIPT };
  return createRepository(forgeRoot, "bench", "httpd", files, {
    forgeUrl,
    modes: { busybox: 0o755, [COOKIE_CGI]: 0o755, [PLAIN_CGI]: 0o755 },
    message: "busybox httpd app",
  });
}

/** The app deployed through one control plane; its hostname and its container's own address. */
export interface BenchApp {
  host: string;
  instanceUrl: string;
  remove: () => Promise<void>;
}

/** Where a control plane listens, and what the bench needs to create a paying account on it. */
export interface ControlPlane {
  base: string;
  port: number;
  operatorToken: string;
}

/** A new account on `plane`, credited, with the app from `repository` deployed and live on one instance. */
export async function deployApp(plane: ControlPlane, repository: string, engineUrl: string): Promise<BenchApp> {
  const runId = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
  const session = new Session(plane.base);
  const email = `bench-floor-${runId}@example.com`;
  await session.json("POST", "/console/api/signup", { email, password: "bench-password-1" });
  await creditAccount(plane.base, plane.operatorToken, email, 100_000, "Benchmark credit");
  const app = await session.json<AppJson>("POST", "/console/api/apps", { name: "Bench httpd", repository, subdomain: `floor-${runId}`, plan: PLAN });
  const host = `${app.hostname}:${plane.port}`;
  await deployThroughWorker(session, app, { url: `http://127.0.0.1:${plane.port}/`, host });
  await settledOnOne(engineUrl, app.id);
  const running = (await appContainers(engineUrl, app.id)).find((c) => c.state === "running" && c.hostPort);
  if (!running) throw new Error("the app has no running container with a published port");
  return {
    host,
    instanceUrl: `http://127.0.0.1:${running.hostPort}/`,
    remove: async () => {
      await session.json("DELETE", `/console/api/apps/${app.id}`);
    },
  };
}
