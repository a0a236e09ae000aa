/**
 * The swarm half of `npm run bench -- --apps`: the same app, the same deploys and the same load as
 * the single-engine half, on a two-node Docker Swarm started for the run (scripts/swarm/up.sh: its
 * own dockerds in network namespaces and a local registry; needs root; never the main dockerd).
 * A second `wrangler dev` runs with RUNTIME_KIND=swarm and the app pinned to the worker node, so
 * every deploy is built on the manager, pushed, pulled by the worker by digest and switched by a
 * start-first service update, and every proxied request crosses to the worker's address.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { generateSecrets, startDevServer } from "../lib/dev-server";
import { creditAccount } from "../lib/seed";
import { type TestSwarm, startSwarm } from "../lib/swarm";
import { type AppJson, PLAN, Session, deployThroughWorker, workerVars } from "./apps";

export interface SwarmFigures {
  /** Deploy to live and 200 through the hostname, ms, measured deploys only. */
  deployMs: number[];
  /** Where the swarm half could not run (not root, no docker-registry), instead of figures. */
  skipped?: string;
}

/** Why the swarm half cannot run on this machine, or null when it can. */
export async function swarmUnavailable(): Promise<string | null> {
  if (process.getuid?.() !== 0) return "the swarm half needs root (it starts its own dockerds in network namespaces)";
  const missing: string[] = [];
  for (const tool of ["dockerd", "docker-registry", "ip", "iptables", "nsenter"]) {
    if (!(await promisify(execFile)("sh", ["-c", `command -v ${tool}`]).then(() => true, () => false))) missing.push(tool);
  }
  return missing.length > 0 ? `the swarm half needs ${missing.join(", ")} (Debian: docker.io, docker-registry, iproute2, iptables, util-linux)` : null;
}

/**
 * Starts the swarm and its Worker, makes the app from `repo`, and hands `measure` the proxy
 * target; everything is removed afterwards, whatever happened.
 */
export async function withSwarmWorker<T>(
  input: { dir: string; repo: string; runId: string; log: (line: string) => void; progress: (line: string) => void },
  measure: (ctx: { session: Session; app: AppJson; proxy: { url: string; host: string }; swarm: TestSwarm }) => Promise<T>,
): Promise<T> {
  input.progress("swarm: starting a two-node swarm with its registry");
  const swarm = await startSwarm({ name: "cpbench", nodes: 2, subnet: "10.77.9" });
  let worker: Awaited<ReturnType<typeof startDevServer>> | null = null;
  let session: Session | null = null;
  let app: AppJson | null = null;
  try {
    const secrets = generateSecrets();
    input.progress("swarm: starting wrangler dev with RUNTIME_KIND=swarm");
    worker = await startDevServer({
      persistTo: join(input.dir, "state-swarm"),
      vars: { ...workerVars(swarm.managerUrl, secrets), RUNTIME_KIND: "swarm", REGISTRY: swarm.registry, SWARM_CONSTRAINTS: "node.role==worker" },
    });
    session = new Session(worker.url);
    const email = `bench-swarm-${input.runId}@example.com`;
    await session.json("POST", "/console/api/signup", { email, password: "bench-password-1" });
    await creditAccount(worker.url, secrets.OPERATOR_TOKEN, email, 100_000, "Benchmark credit");
    app = await session.json<AppJson>("POST", "/console/api/apps", { name: "Bench httpd on a swarm", repository: input.repo, subdomain: `swarm-${input.runId}`, plan: PLAN });
    const proxy = { url: `http://127.0.0.1:${worker.port}/`, host: `${app.hostname}:${worker.port}` };
    input.log(`Swarm app ${app.id} at http://${proxy.host}/ (manager ${swarm.managerAddr}, worker ${swarm.workerAddr})`);
    return await measure({ session, app, proxy, swarm });
  } finally {
    if (session && app) await session.json("DELETE", `/console/api/apps/${app.id}`).catch((err: Error) => input.log(`The swarm app's Delete failed: ${err.message}`));
    await worker?.stop();
    await swarm.down();
  }
}

/** Deploys measured as on the single engine: a warm-up first, then `count` deploys. */
export async function swarmDeploys(session: Session, app: AppJson, proxy: { url: string; host: string }, count: number, progress: (line: string) => void): Promise<{ warmMs: number; runs: Awaited<ReturnType<typeof deployThroughWorker>>[] }> {
  progress("swarm: warm-up deploy (build, push, pull on the worker)");
  const warm = await deployThroughWorker(session, app, proxy);
  const runs = [];
  for (let i = 1; i <= count; i++) {
    progress(`swarm: deploy ${i}/${count} through the Worker`);
    runs.push(await deployThroughWorker(session, app, proxy));
  }
  return { warmMs: warm.totalMs, runs };
}
