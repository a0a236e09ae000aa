/**
 * A `wrangler dev` that a test can kill as a crash would (SIGKILL to its whole process group:
 * wrangler and the workerd it started, with the local queue's messages held in memory) and start
 * again on the same persisted local state (D1, R2, Durable Objects and their alarms), on the same
 * port and with the same secrets, so links signed before the crash still verify.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DevServer, generateSecrets, startDevServer } from "../../scripts/lib/dev-server";
import { E2E_OPERATOR_TOKEN, E2E_RETIRE, localD1Rows, removeEngineObjects } from "./harness";

export interface CrashableWorker {
  /** The Worker's address; the same across restarts. */
  readonly url: string;
  persistTo: string;
  /** wrangler's output since the last (re)start, for failure reports and log checks. */
  output: () => string;
  /** SIGKILL to wrangler's process group; resolves once no process of it is left. */
  kill: () => Promise<void>;
  /** Starts wrangler dev again on the same state, port and settings; resolves once it answers. */
  restart: () => Promise<void>;
  /** Stops it for good, removes what its apps left on the engine, and deletes its state. */
  stop: () => Promise<void>;
}

/** Starts a Worker (test secrets, the e2e operator token, `vars` on top) that can be killed and restarted. */
export async function startCrashableWorker(vars: Record<string, string> = {}): Promise<CrashableWorker> {
  const persistTo = mkdtempSync(join(tmpdir(), "control-plane-crash-"));
  const settings = { ...generateSecrets(), OPERATOR_TOKEN: E2E_OPERATOR_TOKEN, ALLOW_LOCAL_SOURCES: "true", ...E2E_RETIRE, ...vars };
  let server: DevServer = await startDevServer({ persistTo, vars: settings });
  const port = server.port;
  return {
    url: server.url,
    persistTo,
    output: () => server.output(),
    kill: () => killGroup(server),
    restart: async () => {
      server = await startDevServer({ persistTo, port, vars: settings });
    },
    stop: async () => {
      const apps = await localD1Rows(persistTo, "SELECT id FROM apps").catch(() => []);
      await server.stop();
      await removeEngineObjects(apps.map(([id]) => id!));
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}

/** Kills the process group `server` runs in (it is started detached: its own group) and waits until it is empty. */
export async function killGroup(server: DevServer): Promise<void> {
  const pgid = server.process.pid;
  if (pgid === undefined) return;
  const exited = server.process.exitCode !== null ? Promise.resolve() : new Promise<void>((ok) => server.process.once("exit", () => ok()));
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    return; // already gone
  }
  await exited;
  const deadline = Date.now() + 10_000;
  while (groupAlive(pgid)) {
    if (Date.now() > deadline) throw new Error(`process group ${pgid} still has processes 10 s after SIGKILL`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
