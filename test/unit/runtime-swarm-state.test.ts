/**
 * `state(instance)` on a swarm reports running, restarting or exited, with the exit code and the
 * restarts, from the service's tasks (the runtime interface's `state`; the OOM flag is read from
 * the ended task's container by the adapter). The `/tasks` replies are real ones, captured from a
 * single-node swarm of Docker 20.10 (test/fixtures/swarm-tasks), sorted by creation time.
 */
import { describe, expect, it } from "vitest";
import { type SwarmTask, taskRunState } from "../../src/runtime/swarm-rules";
import gaveUp from "../fixtures/swarm-tasks/gave-up.json";
import oomKilled from "../fixtures/swarm-tasks/oom-killed.json";
import restarting from "../fixtures/swarm-tasks/restarting.json";
import runningAfterUpdate from "../fixtures/swarm-tasks/running-after-update.json";
import scaledToZero from "../fixtures/swarm-tasks/scaled-to-zero.json";
import starting from "../fixtures/swarm-tasks/starting.json";
import stopping from "../fixtures/swarm-tasks/stopping.json";

const captured = (tasks: unknown) => tasks as SwarmTask[];
/** The same tasks in the order the engine may send them (it does not sort `/tasks`). */
const shuffled = (tasks: unknown) => [...(tasks as SwarmTask[])].reverse();

describe("taskRunState on captured /tasks replies", () => {
  it.each([
    // The first task is pulling and starting: no restart, nothing exited yet.
    ["a new service's first task on its way up", captured(starting), { status: "created", restarts: 0, exitCode: null, ended: null }],
    // `exit 2`; the restart policy's delay holds the next task at desired `ready`.
    ["a failed task whose replacement waits for the restart delay", captured(restarting), { status: "restarting", restarts: 1, exitCode: 2 }],
    // `exit 3` with MaxAttempts 3: four failed tasks, none desired to run: the policy gave up.
    ["the restart policy gave up after 3 restarts", captured(gaveUp), { status: "exited", restarts: 3, exitCode: 3 }],
    ["the same, sent newest first", shuffled(gaveUp), { status: "exited", restarts: 3, exitCode: 3 }],
    // `tail /dev/zero` under a 32 MiB limit, MaxAttempts 1: the kernel's kill shows as 137.
    ["a task killed for memory, restarted once, then given up", captured(oomKilled), { status: "exited", restarts: 1, exitCode: 137 }],
    // A spec update shut the old task down (not a failure): no restart counted, no exit code while running.
    ["running after an update replaced its task", captured(runningAfterUpdate), { status: "running", restarts: 0, exitCode: null }],
    // Replicas 0: the task is desired `remove` and still stopping, as a stopping container still runs.
    ["a task being stopped", captured(stopping), { status: "running", restarts: 0, exitCode: null }],
    ["scaled to zero (stopped)", captured(scaledToZero), { status: "exited", restarts: 0, exitCode: 137 }],
    ["no task at all", [] as SwarmTask[], { status: "exited", restarts: 0, exitCode: null, ended: null }],
  ])("%s", (_name, tasks, expected) => {
    expect(taskRunState(tasks)).toMatchObject(expected);
  });

  it("names the container of the last ended task, where an engine can tell an OOM kill", () => {
    const tasks = captured(oomKilled);
    const last = tasks.at(-1)!;
    expect(taskRunState(tasks).ended).toEqual({ containerId: last.Status!.ContainerStatus!.ContainerID, nodeId: last.NodeID });
  });
});

/** A task of the generation publishing `port`, created at second `at`. */
const task = (port: number, at: number, state: string, desired: string, exitCode?: number): SwarmTask => ({
  ID: `t-${port}-${at}`,
  CreatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, at)).toISOString(),
  NodeID: "n1",
  DesiredState: desired,
  Spec: { ContainerSpec: { Labels: { "cp.port": String(port) } } },
  Status: { State: state, ...(exitCode === undefined ? {} : { ContainerStatus: { ContainerID: `c-${port}-${at}`, ExitCode: exitCode } }) },
});

describe("taskRunState counts only the generation publishing the service's port", () => {
  it.each([
    [
      // A Restart (forced update onto port 20002) starts a new generation: a fresh process, no restarts.
      "a new generation after the old one crashed twice",
      [task(20001, 1, "failed", "shutdown", 1), task(20001, 2, "failed", "shutdown", 1), task(20001, 3, "shutdown", "shutdown", 0), task(20002, 4, "running", "running")],
      20002,
      { status: "running", restarts: 0, exitCode: null },
    ],
    [
      // Start-first: the old generation serves until the new task runs.
      "an update's new task starting while the old one serves",
      [task(20001, 1, "running", "running"), task(20002, 2, "preparing", "running")],
      20002,
      { status: "running", restarts: 0, exitCode: null },
    ],
    [
      "the new generation's own failures",
      [task(20001, 1, "failed", "shutdown", 1), task(20002, 2, "failed", "shutdown", 4), task(20002, 3, "starting", "running")],
      20002,
      { status: "restarting", restarts: 1, exitCode: 4 },
    ],
    [
      // The orchestrator has not yet replaced the failed task: it is still desired to run.
      "a failed task the orchestrator has yet to replace",
      [task(20003, 1, "failed", "running", 9)],
      20003,
      { status: "restarting", restarts: 0, exitCode: 9 },
    ],
    [
      // `on-failure`: a process ending with 0 is not restarted.
      "a process that ended with 0",
      [task(20004, 1, "complete", "shutdown", 0)],
      20004,
      { status: "exited", restarts: 0, exitCode: 0 },
    ],
    [
      // No task carries the port (a service written by an older adapter): every task counts.
      "no task labelled with the port",
      [task(1, 1, "failed", "shutdown", 5), task(1, 2, "running", "running")],
      20005,
      { status: "running", restarts: 1, exitCode: null },
    ],
  ])("%s", (_name, tasks, port, expected) => {
    expect(taskRunState(tasks, port)).toMatchObject(expected);
  });
});
