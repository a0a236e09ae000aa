/**
 * End-to-end harness: a real `wrangler dev` on a free port with its own temporary state
 * directory, stopped after the suite.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DevServer, generateSecrets, startDevServer } from "../../scripts/lib/dev-server";

export interface Worker extends DevServer {
  persistTo: string;
}

/** Starts the Worker with test secrets and the given variable overrides. */
export async function startWorker(vars: Record<string, string> = {}): Promise<Worker> {
  const persistTo = mkdtempSync(join(tmpdir(), "control-plane-e2e-"));
  const server = await startDevServer({ persistTo, vars: { ...generateSecrets(), ...vars } });
  return {
    ...server,
    persistTo,
    stop: async () => {
      await server.stop();
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}
