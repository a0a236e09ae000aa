/**
 * Whether a plan's memory fits on the swarm before an app's first deploy: some ready, active node
 * must have that much memory left once the reservations of the tasks meant to run on it are
 * subtracted (every instance reserves its plan's memory, so the scheduler keeps the same sums).
 */
import type { DockerEngineClient } from "./docker-client";

export interface NodeCapacity {
  id: string;
  /** `Status.State` of `GET /nodes`: only "ready" nodes take tasks. */
  state: string;
  /** `Spec.Availability`: only "active" nodes take new tasks (not "pause" or "drain"). */
  availability: string;
  /** `Description.Resources.MemoryBytes`. */
  memoryBytes: number;
}

export interface TaskReservation {
  nodeId: string;
  /** `DesiredState` of the task: only tasks meant to run hold their reservation. */
  desiredState: string;
  /** `Spec.Resources.Reservations.MemoryBytes` (0 when none). */
  memoryBytes: number;
}

export type CapacityVerdict = { fits: true; nodeId: string } | { fits: false; message: string };

/** The node with the most memory left fits, or a sentence saying what is missing. */
export function checkCapacity(planMemoryBytes: number, nodes: NodeCapacity[], tasks: TaskReservation[]): CapacityVerdict {
  const usable = nodes.filter((n) => n.state === "ready" && n.availability === "active");
  if (usable.length === 0) {
    return { fits: false, message: "The app cannot be placed: no machine of the cluster is ready to take new apps. No charge was made." };
  }
  const reserved = new Map<string, number>();
  for (const t of tasks) {
    if (t.desiredState !== "running") continue;
    reserved.set(t.nodeId, (reserved.get(t.nodeId) ?? 0) + Math.max(0, t.memoryBytes));
  }
  let best = { id: "", free: -Infinity };
  for (const n of usable) {
    const free = n.memoryBytes - (reserved.get(n.id) ?? 0);
    if (free > best.free) best = { id: n.id, free };
  }
  if (best.free >= planMemoryBytes) return { fits: true, nodeId: best.id };
  return {
    fits: false,
    message: `The app cannot be placed: its plan needs ${mib(planMemoryBytes)} of memory and the most any machine of the cluster has free is ${mib(Math.max(0, best.free))}. No charge was made; try a smaller plan or again later.`,
  };
}

function mib(bytes: number): string {
  return `${Math.floor(bytes / (1024 * 1024))} MiB`;
}

/** The subset of `GET /nodes` and `GET /tasks` entries read by `swarmCapacity`. */
interface NodeJson {
  ID: string;
  Spec?: { Availability?: string };
  Status?: { State?: string };
  Description?: { Resources?: { MemoryBytes?: number } };
}
interface TaskJson {
  NodeID?: string;
  DesiredState?: string;
  Spec?: { Resources?: { Reservations?: { MemoryBytes?: number } } };
}

/** Whether a plan's memory fits on some ready node of a swarm, from the manager's `/nodes` and the running reservations. */
export async function swarmCapacity(client: DockerEngineClient, memoryBytes: number): Promise<CapacityVerdict> {
  const [nodes, tasks] = await Promise.all([
    client.json<NodeJson[]>("GET", "/nodes"),
    client.json<TaskJson[]>("GET", "/tasks", { query: { filters: JSON.stringify({ "desired-state": ["running"] }) } }),
  ]);
  return checkCapacity(
    memoryBytes,
    nodes.body.map((n) => ({ id: n.ID, state: n.Status?.State ?? "", availability: n.Spec?.Availability ?? "", memoryBytes: n.Description?.Resources?.MemoryBytes ?? 0 })),
    tasks.body.map((t) => ({ nodeId: t.NodeID ?? "", desiredState: t.DesiredState ?? "", memoryBytes: t.Spec?.Resources?.Reservations?.MemoryBytes ?? 0 })),
  );
}
