/**
 * What the Swarm adapter reads from a task's own container, on the engine of the node that runs
 * it: its stats (CPU and memory, for the metrics sampler and the memory_high alert) and whether
 * the kernel's OOM killer ended it. The manager answers for its own node's containers; another
 * node's engine is reached at SWARM_NODE_ENGINE_URL with the node's address in place of `{node}`
 * (the same credentials as the manager's). Without it, tasks on other nodes have no stats (null)
 * and no OOM flag (false): the Engine API gives no route from the manager to another node's
 * containers (service and task logs are the one thing the manager relays).
 */
import { DockerEngineClient } from "./docker-client";
import { containerStats } from "./docker";
import type { SwarmServices } from "./swarm-services";
import { publishedPortOf } from "./swarm-spec";
import { generationOutcome, taskRunState } from "./swarm-rules";
import type { InstanceStats } from "./types";

/** The Engine API of a node, by its id; null when the Worker cannot reach that node's engine. */
export type NodeEngines = (nodeId: string) => Promise<DockerEngineClient | null>;

/** The instance's stats from the running task of its current generation; null while none runs there. */
export async function serviceStats(services: SwarmServices, nodeEngine: NodeEngines, id: string): Promise<InstanceStats | null> {
  const service = await services.service(id);
  const port = service ? publishedPortOf(service.Spec) : undefined;
  if (!service || service.Spec.Mode.Replicated.Replicas === 0 || port === undefined) return null;
  const tasks = await services.tasks(service.ID);
  const outcome = generationOutcome(tasks, port);
  if (outcome.kind !== "running" || !outcome.task.NodeID) return null;
  const containerId = outcome.task.Status?.ContainerStatus?.ContainerID;
  const engine = await nodeEngine(outcome.task.NodeID);
  if (!containerId || !engine) return null;
  return containerStats(engine, containerId, taskRunState(tasks, port).restarts);
}

/** Whether the kernel's OOM killer ended this container; false when its node's engine cannot be asked. */
export async function oomKilled(nodeEngine: NodeEngines, ended: { containerId: string; nodeId: string | null }): Promise<boolean> {
  const engine = ended.nodeId ? await nodeEngine(ended.nodeId) : null;
  if (!engine) return false;
  const { status, body } = await engine.json<{ State?: { OOMKilled?: boolean } }>("GET", `/containers/${encodeURIComponent(ended.containerId)}/json`, { accept: [404] });
  return status !== 404 && body.State?.OOMKilled === true;
}

/**
 * The engine of each node: the manager's own node is this client; another node's is reached at
 * `nodeEngineUrl(address)` with the manager's `fetch` (its credentials), when given.
 */
export function nodeEngines(manager: DockerEngineClient, services: SwarmServices, nodeEngineUrl: ((address: string) => string | null) | undefined, baseFetch: typeof fetch): NodeEngines {
  let own: Promise<string | null> | undefined;
  const engines = new Map<string, DockerEngineClient>();
  return async (nodeId) => {
    own ??= manager.json<{ Swarm?: { NodeID?: string } }>("GET", "/info").then(({ body }) => body.Swarm?.NodeID ?? null);
    if ((await own) === nodeId) return manager;
    const address = nodeEngineUrl ? await services.nodeAddress(nodeId) : null;
    const url = address ? nodeEngineUrl!(address) : null;
    if (!url) return null;
    if (!engines.has(url)) engines.set(url, new DockerEngineClient(url, baseFetch));
    return engines.get(url)!;
  };
}
