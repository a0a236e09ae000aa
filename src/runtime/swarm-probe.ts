/**
 * The no-new-privileges check of the swarm's start-up report (rules in swarm-rules.ts,
 * `noNewPrivilegesProblems`): a one-shot job from SWARM_PROBE_IMAGE runs `cat /proc/self/status`
 * once on every usable node; each task's output is read from the manager and the job is removed,
 * whatever happened. A node whose task has not ended within `timeoutMs` is reported unchecked.
 */
import type { DockerEngineClient } from "./docker-client";
import { type ManagerInfo, NO_NEW_PRIVILEGES_UNCHECKED, type ProbeRun, noNewPrivilegesProblems, probeServiceSpec, probeSettled, swarmProblems, usableNodes } from "./swarm-report-rules";
import type { SwarmNode, SwarmTask } from "./swarm-rules";

export interface ProbeDeps {
  client: DockerEngineClient;
  /** SWARM_PROBE_IMAGE; undefined: the probe is not run, and the report says so. */
  image: string | undefined;
  /** A finished task's output (stdout and stderr), as text. */
  readTaskLogs(taskId: string): Promise<string>;
  timeoutMs: number;
  pollMs: number;
}

/**
 * The swarm's start-up report: what the operator should fix ([] when nothing). On a manager with
 * nodes to place apps on, it also runs the no-new-privileges probe on each of them.
 */
export async function swarmReport(deps: ProbeDeps): Promise<string[]> {
  const [info, listed] = await Promise.all([deps.client.json<ManagerInfo>("GET", "/info"), deps.client.json<SwarmNode[]>("GET", "/nodes", { accept: [503] })]);
  const nodes = listed.status === 503 ? [] : listed.body;
  const problems = swarmProblems(info.body, nodes);
  if (listed.status === 503 || usableNodes(nodes).length === 0) return problems;
  if (!deps.image) return [...problems, NO_NEW_PRIVILEGES_UNCHECKED];
  return [...problems, ...noNewPrivilegesProblems(nodes, await runNoNewPrivilegesProbe({ ...deps, image: deps.image }, nodes))];
}

async function runNoNewPrivilegesProbe(deps: ProbeDeps & { image: string }, nodes: SwarmNode[]): Promise<ProbeRun[]> {
  // A name of its own per report: two reports at once (the clock stands still within a request) never clash.
  const name = `cp-probe-${crypto.randomUUID()}`;
  const { body } = await deps.client.json<{ ID: string }>("POST", "/services/create", { json: probeServiceSpec(deps.image, name) });
  try {
    const filters = JSON.stringify({ service: [body.ID] });
    const deadline = Date.now() + deps.timeoutMs;
    let tasks: SwarmTask[] = [];
    for (;;) {
      tasks = (await deps.client.json<SwarmTask[]>("GET", "/tasks", { query: { filters } })).body;
      if (probeSettled(nodes, tasks) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, deps.pollMs));
    }
    const runs: ProbeRun[] = [];
    for (const task of tasks) {
      if (!task.NodeID) continue;
      const state = task.Status?.State ?? "unknown";
      const output = state === "complete" ? await deps.readTaskLogs(task.ID) : "";
      runs.push({ nodeId: task.NodeID, state, ...(task.Status?.Err ? { error: task.Status.Err } : {}), output });
    }
    return runs;
  } finally {
    await deps.client
      .request("DELETE", `/services/${encodeURIComponent(body.ID)}`, { accept: [404] })
      .then((res) => res.arrayBuffer())
      .catch(() => undefined);
  }
}
