/**
 * A throwaway Docker Swarm for tests and the apps benchmark, from scripts/swarm/up.sh (its own dockerds in their own
 * network namespaces and a local registry; never the machine's main dockerd), with the manager's
 * Engine API served over loopback HTTP as the Worker would reach it.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { type DockerForwarder, startDockerForwarder } from "./docker-forwarder";

const run = promisify(execFile);
const SCRIPTS = new URL("../swarm/", import.meta.url).pathname;

export interface TestSwarm {
  /** The manager's Engine API over loopback HTTP. */
  managerUrl: string;
  managerAddr: string;
  workerAddr?: string;
  managerSock: string;
  workerSock?: string;
  registry: string;
  down(): Promise<void>;
}

export async function startSwarm(options: {
  name: string;
  nodes: 1 | 2;
  subnet: string;
  registryAuth?: { username: string; password: string };
  /** This node's dockerd (1 the manager, 2 the worker) runs without `--no-new-privileges`. */
  allowNewPrivileges?: 1 | 2;
}): Promise<TestSwarm> {
  const args = ["--name", options.name, "--nodes", String(options.nodes), "--subnet", options.subnet];
  if (options.allowNewPrivileges) args.push("--allow-new-privileges", String(options.allowNewPrivileges));
  if (options.registryAuth) args.push("--registry-auth", `${options.registryAuth.username}:${options.registryAuth.password}`);
  let forwarder: DockerForwarder | undefined;
  const down = async () => {
    await forwarder?.close();
    await run(`${SCRIPTS}down.sh`, ["--name", options.name]);
  };
  try {
    const { stdout } = await run(`${SCRIPTS}up.sh`, args, { timeout: 120_000 });
    const env = Object.fromEntries(stdout.trim().split("\n").map((line) => line.split("=", 2) as [string, string]));
    forwarder = await startDockerForwarder({ socketPath: env.SWARM_MANAGER_SOCK });
    return {
      managerUrl: forwarder.url,
      managerAddr: env.SWARM_MANAGER_ADDR!,
      workerAddr: env.SWARM_WORKER_ADDR,
      managerSock: env.SWARM_MANAGER_SOCK!,
      workerSock: env.SWARM_WORKER_SOCK,
      registry: env.SWARM_REGISTRY!,
      down,
    };
  } catch (error) {
    await down().catch(() => undefined);
    throw error;
  }
}
