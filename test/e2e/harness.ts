/**
 * End-to-end harness: a real `wrangler dev` on a free port with its own temporary state
 * directory, stopped after the suite; or, for a file that asks for the Worker with no settings
 * of its own, the run's shared one (shared-stack.ts).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { generateSecrets, startDevServer } from "../../scripts/lib/dev-server";

/** A Worker under test: its own `wrangler dev`, or the run's shared one. */
export interface Worker {
  url: string;
  port: number;
  /** Its `--persist-to` directory (localD1, localD1Rows). */
  persistTo: string;
  /** wrangler's output so far (the shared Worker's holds every file's requests). */
  output: () => string;
  /** Stops an own Worker; for the shared one, deletes the apps of the accounts this file signed up. */
  stop: () => Promise<void>;
}

/** The operator token every end-to-end Worker runs with (operator routes, wallet credits). */
export const E2E_OPERATOR_TOKEN = "e2e-operator-token-0123456789abcdefghijkl";

/**
 * A switch's old instance drains 2 s and gets 2 s to exit in these tests (deploys end sooner);
 * the drain test sets its own.
 */
export const E2E_RETIRE = { DRAIN_SECONDS: "2", STOP_GRACE_SECONDS: "2" };

/**
 * The environment variable naming where the shared stack's coordinator listens: set by
 * shared-stack.ts (vitest.e2e.config.ts's globalSetup) for the test processes it starts, absent
 * under other configs.
 */
export const SHARED_STACK = "E2E_SHARED_STACK";

/** What the coordinator answers about the shared stack. */
export interface SharedStackInfo {
  url: string;
  port: number;
  persistTo: string;
  outputFile: string;
  engineUrl: string;
  dnsUrl: string;
  resolverUrl: string;
}

/**
 * Starts the Worker with test secrets and the given variable overrides. With none (and no
 * scheduled route), a file run under vitest.e2e.config.ts gets the shared Worker instead.
 */
export async function startWorker(vars: Record<string, string> = {}, options: { testScheduled?: boolean } = {}): Promise<Worker> {
  if (Object.keys(vars).length === 0 && !options.testScheduled) {
    const shared = await sharedStack();
    if (shared) return shared.worker;
  }
  return startOwnWorker(vars, options);
}

/** A Worker of the caller's own, whatever the run shares. */
export async function startOwnWorker(vars: Record<string, string> = {}, options: { testScheduled?: boolean; outputFile?: string } = {}): Promise<Worker> {
  const persistTo = mkdtempSync(join(tmpdir(), "control-plane-e2e-"));
  const server = await startDevServer({ persistTo, ...options, vars: { ...generateSecrets(), OPERATOR_TOKEN: E2E_OPERATOR_TOKEN, ALLOW_LOCAL_SOURCES: "true", ...E2E_RETIRE, ...vars } });
  return {
    url: server.url,
    port: server.port,
    output: server.output,
    persistTo,
    stop: async () => {
      const apps = await localD1Rows(persistTo, "SELECT id FROM apps").catch(() => []);
      await server.stop();
      await removeEngineObjects(apps.map(([id]) => id!));
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}

/** The password every test account is signed up with (apps-harness signedUp, browser signUpInConsole). */
export const TEST_PASSWORD = "correct horse battery";

/** Accounts this file signed up with TEST_PASSWORD: a shared Worker's stop() deletes their apps. */
const signedUpEmails = new Set<string>();

/** Notes an account this file signed up with TEST_PASSWORD. */
export function noteAccount(email: string): void {
  signedUpEmails.add(email);
}

/** The run's shared stack, started by the coordinator at the first ask; null outside vitest.e2e.config.ts. */
export async function sharedStack(): Promise<{ worker: Worker; info: SharedStackInfo } | null> {
  const coordinator = process.env[SHARED_STACK];
  if (!coordinator) return null;
  const res = await fetch(`${coordinator}/stack`);
  if (!res.ok) throw new Error(`The shared Worker did not start: ${await res.text()}`);
  const info = (await res.json()) as SharedStackInfo;
  const worker: Worker = {
    url: info.url,
    port: info.port,
    persistTo: info.persistTo,
    output: () => readFileSync(info.outputFile, "utf8"),
    stop: () => deleteAppsOf(info, [...signedUpEmails]),
  };
  return { worker, info };
}

/**
 * Deletes, through the console as their owners, the apps of these accounts on the shared Worker,
 * so its engine objects do not outlive the file (the engine hands out about 30 bridge networks).
 * What a Delete refuses (a change in flight) goes when the run ends (shared-stack.ts).
 */
async function deleteAppsOf(info: SharedStackInfo, emails: string[]): Promise<void> {
  if (emails.length === 0) return;
  const quoted = emails.map((email) => `'${email.replaceAll("'", "''")}'`).join(", ");
  const rows = await localD1Rows(info.persistTo, `SELECT u.email, a.id FROM apps a JOIN accounts u ON u.id = a.account_id WHERE u.email IN (${quoted})`);
  for (const email of new Set(rows.map(([owner]) => owner!))) {
    const login = await fetch(`${info.url}/console/api/login`, {
      method: "POST",
      headers: { Origin: info.url, "Content-Type": "application/json" },
      body: JSON.stringify({ email, password: TEST_PASSWORD }),
    });
    const cookie = login.headers.get("set-cookie")?.split(";")[0];
    await login.body?.cancel();
    if (!login.ok || !cookie) continue;
    for (const [, id] of rows.filter(([owner]) => owner === email)) {
      const res = await fetch(`${info.url}/console/api/apps/${id}`, { method: "DELETE", headers: { Origin: info.url, Cookie: cookie } });
      await res.body?.cancel();
    }
  }
}

/**
 * Runs SQL on the local D1 of a running `wrangler dev` (its `--persist-to` directory), for states a
 * test must hold still, such as an export that stays `running`. The runtime keeps the database open
 * in WAL mode and may hold its write lock at that moment, so the statement goes through the sqlite3
 * CLI with a busy timeout: it waits for the lock instead of failing with SQLITE_BUSY.
 */
export async function localD1(persistTo: string, sql: string): Promise<void> {
  await promisify(execFile)("sqlite3", ["-bail", "-cmd", ".timeout 30000", localD1File(persistTo), sql]);
}

/** Rows of a query on the local D1 of a running `wrangler dev`, as text fields. */
export async function localD1Rows(persistTo: string, sql: string): Promise<string[][]> {
  const { stdout } = await promisify(execFile)("sqlite3", ["-bail", "-readonly", "-separator", "\t", "-cmd", ".timeout 30000", localD1File(persistTo), sql]);
  return stdout.split("\n").filter(Boolean).map((line) => line.split("\t"));
}

function localD1File(persistTo: string): string {
  const dir = join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
  const files = readdirSync(dir).filter((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite");
  const [file, ...others] = files;
  if (file === undefined || others.length > 0) {
    throw new Error(`expected one local D1 database in ${dir}, found: ${files.join(", ") || "none"}`);
  }
  return join(dir, file);
}

/**
 * Removes from the machine's dockerd what this Worker's apps left there: instances (by their app
 * label), networks and images. Apps a test did not delete (another account's, or a delete a test
 * expects to fail) would otherwise outlive the run; the engine hands out about 30 bridge networks.
 */
export async function removeEngineObjects(appIds: string[]): Promise<void> {
  const docker = (args: string[]) => promisify(execFile)("docker", args).then((r) => r.stdout.split("\n").filter(Boolean), () => [] as string[]);
  for (const id of appIds) {
    const containers = await docker(["ps", "-aq", "--filter", `label=control-plane.app_id=${id}`]);
    if (containers.length > 0) await docker(["rm", "-f", ...containers]);
    await docker(["network", "rm", `control-plane-app-${id}`]);
    const images = await docker(["images", "--format", "{{.Repository}}:{{.Tag}}", `control-plane/app-${id}`]);
    if (images.length > 0) await docker(["rmi", "-f", ...images]);
  }
}
