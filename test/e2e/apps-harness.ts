/**
 * The apps stack for end-to-end tests: the machine's real dockerd (through the same localhost
 * forwarder `npm start` uses), a dev forge serving local git repositories, and a real
 * `wrangler dev` with RUNTIME_URL pointing at the engine. Test images are built FROM scratch
 * with Debian's static busybox, since there is no image registry here.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type DevDns, startDevDns } from "../../scripts/dev-dns";
import { createRepository, startDevForge } from "../../scripts/dev-forge";
import { creditAccount as creditWallet } from "../../scripts/lib/seed";
import { dockerSocketAvailable, startDockerForwarder } from "../../scripts/lib/docker-forwarder";
import { ConsoleSession } from "./export-helpers";
import { E2E_OPERATOR_TOKEN, type SharedStackInfo, TEST_PASSWORD, type Worker, noteAccount, sharedStack, startOwnWorker } from "./harness";

export interface AppsStack {
  worker: Worker;
  forgeUrl: string;
  forgeRoot: string;
  engineUrl: string;
  /** The DoH stand-in the Worker's custom-domain checks ask (DNS_RESOLVER_URL). */
  dns: DevDns;
  stop(): Promise<void>;
}

/**
 * `testScheduled`: GET /__scheduled on the Worker runs its cron's work at once. With no settings,
 * a file run under vitest.e2e.config.ts gets the run's shared Worker and engine (shared-stack.ts)
 * and a forge of its own.
 */
export async function startAppsStack(vars: Record<string, string> = {}, options: { testScheduled?: boolean } = {}): Promise<AppsStack> {
  if (!(await dockerSocketAvailable())) {
    throw new Error("No Docker engine answers at /var/run/docker.sock: install docker.io and start dockerd (bash .ci/run does both).");
  }
  const shared = Object.keys(vars).length === 0 && !options.testScheduled ? await sharedStack() : null;
  if (shared) return withForge({ worker: shared.worker, engineUrl: shared.info.engineUrl, dns: sharedDns(shared.info), close: async () => {} });
  return withForge(await startEngineWorker(vars, options));
}

/** A Worker of its own with the machine's dockerd behind it and a DNS stand-in: an apps stack without its forge. */
export async function startEngineWorker(
  vars: Record<string, string> = {},
  options: { testScheduled?: boolean; outputFile?: string } = {},
): Promise<{ worker: Worker; engineUrl: string; dns: DevDns; close: () => Promise<void> }> {
  const [engine, dns] = await Promise.all([startDockerForwarder(), startDevDns()]);
  const worker = await startOwnWorker({ RUNTIME_URL: engine.url, PROBE_TIMEOUT_SECONDS: "8", DNS_RESOLVER_URL: dns.resolverUrl, ...vars }, options);
  return { worker, engineUrl: engine.url, dns, close: async () => void (await Promise.all([engine.close(), dns.close()])) };
}

async function withForge(parts: { worker: Worker; engineUrl: string; dns: DevDns; close: () => Promise<void> }): Promise<AppsStack> {
  const forgeRoot = mkdtempSync(join(tmpdir(), "control-plane-forge-"));
  const forge = await startDevForge({ root: forgeRoot, port: 0 });
  return {
    worker: parts.worker,
    forgeUrl: forge.url,
    forgeRoot,
    engineUrl: parts.engineUrl,
    dns: parts.dns,
    stop: async () => {
      await parts.worker.stop();
      await Promise.all([parts.close(), forge.close()]);
      rmSync(forgeRoot, { recursive: true, force: true });
    },
  };
}

/** The shared stack's DNS stand-in: its address only; records are set by files with a stack of their own. */
function sharedDns(info: SharedStackInfo): DevDns {
  const refuse = () => {
    throw new Error("The shared Worker's DNS stand-in takes no records from a file: give startAppsStack settings of its own (DOMAIN_RECHECK_SECONDS, ...) for a stack whose records the file sets.");
  };
  return { url: info.dnsUrl, resolverUrl: info.resolverUrl, set: refuse, remove: refuse, close: async () => {} };
}

/** Debian's static busybox: the one binary test images need. */
export const BUSYBOX = readFileSync("/bin/busybox");

/** A busybox httpd app serving `page` on `port`, bound as `bind` (0.0.0.0 by default). */
export function httpdApp(page: string, options: { port?: number; bind?: string; expose?: string | null; extra?: string } = {}): Record<string, string | Uint8Array> {
  const port = options.port ?? 8080;
  const expose = options.expose === undefined ? `EXPOSE ${port}\n` : options.expose === null ? "" : `EXPOSE ${options.expose}\n`;
  return {
    Dockerfile:
      `FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\n${options.extra ?? ""}${expose}` +
      `CMD ["/bin/busybox", "httpd", "-f", "-v", "-p", "${options.bind ?? "0.0.0.0"}:${port}", "-h", "/www"]\n`,
    busybox: BUSYBOX,
    "www/index.html": page,
  };
}

/** Puts files in a new repository on the dev forge; returns its https-shaped (here http) URL. */
export function repository(stack: AppsStack, name: string, files: Record<string, string | Uint8Array>, branch = "main"): Promise<string> {
  const modes = Object.fromEntries(Object.keys(files).filter((path) => path.endsWith("busybox")).map((path) => [path, 0o755]));
  return createRepository(stack.forgeRoot, "acme", name, files, { branch, modes, forgeUrl: stack.forgeUrl });
}

/** Credits an account's wallet through the operator route. */
export async function creditAccount(base: string, account: string, amount: number, note = "Test credit"): Promise<void> {
  await creditWallet(base, E2E_OPERATOR_TOKEN, account, amount, note);
}

/** A signed-up console session whose wallet holds `credit` DA (enough for many first deploys unless told). */
export async function signedUp(base: string, options: { credit?: number; email?: string } = {}): Promise<ConsoleSession> {
  const session = new ConsoleSession(base);
  const email = options.email ?? `apps-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  await session.call("POST", "/console/api/signup", { email, password: TEST_PASSWORD });
  noteAccount(email);
  const credit = options.credit ?? 100_000;
  if (credit > 0) await creditAccount(base, email, credit);
  return session;
}

export interface AppJson {
  id: string;
  subdomain: string;
  hostname: string;
  url: string;
  status: string;
  deploy_in_progress: boolean;
  port: number | null;
  port_source: string | null;
  port_reason: string | null;
  latest_deploy: { id: string; status: string; failure?: { kind: string; message: string } } | null;
}

/** Presses Deploy and waits until the deploy ends; returns the app afterwards. */
export async function deployAndWait(session: ConsoleSession, appId: string, timeoutMs = 120_000): Promise<AppJson> {
  await session.call("POST", `/console/api/apps/${appId}/deploy`);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const app = await session.call<AppJson>("GET", `/console/api/apps/${appId}`);
    if (!app.deploy_in_progress) return app;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`deploy of ${appId} did not end within ${timeoutMs / 1000} s`);
}

/** A request to an app's hostname through the Worker, as curl would send it. */
export async function curlApp(stack: AppsStack, subdomain: string, path = "/"): Promise<{ status: number; body: string }> {
  const { stdout } = await promisify(execFile)("curl", ["-sS", "-w", "\n%{http_code}", `http://${subdomain}.localhost:${stack.worker.port}${path}`]);
  const cut = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

/** Asks the engine directly (not through the Worker) whether a container or image exists. */
export async function engineHas(stack: AppsStack, kind: "containers" | "images", id: string): Promise<boolean> {
  const res = await fetch(`${stack.engineUrl}/${kind}/${encodeURIComponent(id)}/json`);
  await res.body?.cancel();
  return res.status === 200;
}

