/**
 * The Worker under test: `wrangler dev` on one port and one state directory, with the bench's
 * settings and one set of secrets, so it can be restarted between measurements (a fresh workerd
 * for each, whose idle memory is the baseline) while sessions and signed links stay valid.
 */
import { type DevServer, generateSecrets, startDevServer } from "../lib/dev-server";
import { type RssByRole, currentRss } from "./memory";

/** Settings for the Worker under test: no rate limit or cooldown in the way of the measurements. */
const BENCH_VARS = {
  RATE_LIMIT_PER_MINUTE: "1000000",
  RATE_LIMIT_BURST: "1000000",
  EXPORT_COOLDOWN_SECONDS: "0",
};

/** How long a fresh workerd is left alone before its idle memory is read. */
const SETTLE_MS = 2000;

export interface WorkerProcess {
  /** The running server; replaced by each restart. */
  readonly server: DevServer;
  /** Resident memory per workerd shortly after the last (re)start, before any request of ours. */
  readonly idleRss: RssByRole;
  /** Stops wrangler and starts it again on the same port and state. */
  restart: () => Promise<void>;
  stop: () => Promise<void>;
}

async function settle(server: DevServer): Promise<RssByRole> {
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  return currentRss(server.process.pid!, server.port);
}

/** Starts the Worker with local state under `persistTo`. */
export async function startWorkerProcess(persistTo: string): Promise<WorkerProcess> {
  const vars = { ...generateSecrets(), ...BENCH_VARS };
  let server = await startDevServer({ persistTo, vars });
  let idleRss = await settle(server);
  return {
    get server() {
      return server;
    },
    get idleRss() {
      return idleRss;
    },
    async restart() {
      await server.stop();
      server = await startDevServer({ persistTo, vars, port: server.port });
      idleRss = await settle(server);
    },
    stop: () => server.stop(),
  };
}
