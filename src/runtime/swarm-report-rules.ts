/**
 * Pure rules of the swarm's start-up report (no I/O): what the operator should fix on the swarm,
 * and what the no-new-privileges probe job found on each node (swarm-probe.ts runs it).
 */
import { type SwarmNode, type SwarmTask, nodeAddress } from "./swarm-rules";

/** The subset of `GET /info` on the manager read by the start-up report. */
export interface ManagerInfo {
  SecurityOptions?: string[];
  Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean };
}

/**
 * What an operator should fix before apps run on the swarm, one sentence each: an engine that is
 * not a manager, and nodes that cannot take apps. Whether each node keeps containers from gaining
 * privileges is checked by running a probe there (`noNewPrivilegesProblems`).
 */
export function swarmProblems(info: ManagerInfo, nodes: SwarmNode[]): string[] {
  const problems: string[] = [];
  if (info.Swarm?.LocalNodeState !== "active" || !info.Swarm.ControlAvailable) {
    problems.push("The engine at RUNTIME_URL is not a Docker Swarm manager.");
  }
  if (usableNodes(nodes).length === 0) problems.push("No node of the swarm is ready and active: apps cannot be placed.");
  for (const n of nodes) {
    if (n.Status?.State === "ready" && nodeAddress(n) === null) problems.push(`Node ${n.ID} reports no address; label it with cp.address.`);
  }
  return problems;
}

/** A node's name in the report: its hostname, else its id. */
export function nodeName(node: SwarmNode): string {
  return node.Description?.Hostname ? `${node.Description.Hostname} (${node.ID.slice(0, 12)})` : node.ID;
}

/** Nodes a job (or an app) can be placed on now. */
export function usableNodes(nodes: SwarmNode[]): SwarmNode[] {
  return nodes.filter((n) => n.Status?.State === "ready" && n.Spec?.Availability === "active");
}

/** States a task does not leave. */
const TASK_ENDED = new Set(["complete", "failed", "rejected", "shutdown", "orphaned", "remove"]);

/** One node's run of the no-new-privileges probe: its task's state and error, and what it printed. */
export interface ProbeRun {
  nodeId: string;
  state: string;
  error?: string;
  output: string;
}

/** Whether every usable node's probe task has ended (the probe job is then read and removed). */
export function probeSettled(nodes: SwarmNode[], tasks: SwarmTask[]): boolean {
  return usableNodes(nodes).every((n) => tasks.some((t) => t.NodeID === n.ID && TASK_ENDED.has(t.Status?.State ?? "")));
}

export const NO_NEW_PRIVILEGES_UNCHECKED =
  "No node was checked for no-new-privileges: set SWARM_PROBE_IMAGE to an image in the registry that has `cat` (README, Deploying).";

/**
 * The report's sentences on no-new-privileges, one per usable node that fails it. Docker 20.10
 * ignores `NoNewPrivileges` in a task spec, so a node keeps setuid programs in apps from raising
 * their privileges only with its daemon option `"no-new-privileges": true`, which no Engine API
 * call shows: a probe task on the node prints its own `/proc/self/status`, whose `NoNewPrivs:`
 * line is 1 when the option is set.
 */
export function noNewPrivilegesProblems(nodes: SwarmNode[], runs: ProbeRun[]): string[] {
  const problems: string[] = [];
  for (const node of usableNodes(nodes)) {
    const name = nodeName(node);
    const own = runs.filter((r) => r.nodeId === node.ID);
    const run = own.find((r) => r.state === "complete") ?? own.find((r) => TASK_ENDED.has(r.state)) ?? own[0];
    const flag = run ? /^NoNewPrivs:\s*(\d)\s*$/m.exec(run.output)?.[1] : undefined;
    if (flag === "1") continue;
    if (flag === "0") {
      problems.push(`Node ${name} lets containers gain privileges: set "no-new-privileges": true in /etc/docker/daemon.json there and restart dockerd.`);
    } else if (!run || !TASK_ENDED.has(run.state)) {
      problems.push(`Node ${name} did not finish the no-new-privileges probe in time; it was not checked.`);
    } else if (run.state !== "complete") {
      problems.push(`Node ${name} could not run the no-new-privileges probe (${run.error || run.state}); it was not checked.`);
    } else {
      problems.push(`Node ${name} ran the no-new-privileges probe but it printed no NoNewPrivs line: SWARM_PROBE_IMAGE needs \`cat\`.`);
    }
  }
  return problems;
}

/** The one-shot job that runs the probe once on every usable node (`GlobalJob`, API 1.41). */
export function probeServiceSpec(image: string, name: string): Record<string, unknown> {
  return {
    Name: name,
    Labels: { [PROBE_LABEL]: "no-new-privileges" },
    TaskTemplate: {
      ContainerSpec: { Image: image, Command: ["cat", "/proc/self/status"], Labels: { [PROBE_LABEL]: "no-new-privileges" } },
      Resources: { Limits: { MemoryBytes: 16 * 1024 * 1024, NanoCPUs: 100_000_000, Pids: 8 } },
      RestartPolicy: { Condition: "none" },
    },
    Mode: { GlobalJob: {} },
  };
}

/** Label of the report's probe job (never an app's service). */
export const PROBE_LABEL = "control-plane.probe";
