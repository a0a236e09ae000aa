/**
 * End-to-end harness: a real `wrangler dev` on a free port with its own temporary state
 * directory, stopped after the suite.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type DevServer, generateSecrets, startDevServer } from "../../scripts/lib/dev-server";

export interface Worker extends DevServer {
  persistTo: string;
}

/** The operator token every end-to-end Worker runs with (operator routes, wallet credits). */
export const E2E_OPERATOR_TOKEN = "e2e-operator-token-0123456789abcdefghijkl";

/**
 * A switch's old instance drains 2 s and gets 2 s to exit in these tests (deploys end sooner);
 * the drain test sets its own.
 */
export const E2E_RETIRE = { DRAIN_SECONDS: "2", STOP_GRACE_SECONDS: "2" };

/** Starts the Worker with test secrets and the given variable overrides. */
export async function startWorker(vars: Record<string, string> = {}, options: { testScheduled?: boolean } = {}): Promise<Worker> {
  const persistTo = mkdtempSync(join(tmpdir(), "control-plane-e2e-"));
  const server = await startDevServer({ persistTo, ...options, vars: { ...generateSecrets(), OPERATOR_TOKEN: E2E_OPERATOR_TOKEN, ALLOW_LOCAL_SOURCES: "true", ...E2E_RETIRE, ...vars } });
  return {
    ...server,
    persistTo,
    stop: async () => {
      const apps = await localD1Rows(persistTo, "SELECT id FROM apps").catch(() => []);
      await server.stop();
      await removeEngineObjects(apps.map(([id]) => id!));
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
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
