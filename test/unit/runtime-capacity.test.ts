/**
 * Before an app's first deploy on a swarm, its plan's memory is checked against what the nodes
 * report (`/nodes` resources minus the reservations of tasks meant to run); when it does not fit
 * the deploy is refused with a clear sentence and no charge.
 */
import { describe, expect, it } from "vitest";
import { capacityRefusal } from "../../src/apps/controls";
import { type NodeCapacity, type TaskReservation, checkCapacity } from "../../src/runtime/capacity";

const MiB = 1024 * 1024;
const node = (id: string, memoryMiB: number, extra: Partial<NodeCapacity> = {}): NodeCapacity => ({
  id,
  state: "ready",
  availability: "active",
  memoryBytes: memoryMiB * MiB,
  ...extra,
});
const task = (nodeId: string, memoryMiB: number, desiredState = "running"): TaskReservation => ({ nodeId, desiredState, memoryBytes: memoryMiB * MiB });

describe("checkCapacity", () => {
  const cases: [string, number, NodeCapacity[], TaskReservation[], { fits: true; nodeId: string } | RegExp][] = [
    ["an empty node fits", 256, [node("a", 1024)], [], { fits: true, nodeId: "a" }],
    ["exactly the memory left fits", 256, [node("a", 512)], [task("a", 256)], { fits: true, nodeId: "a" }],
    ["the node with the most left is chosen", 256, [node("a", 1024), node("b", 2048)], [task("b", 1536)], { fits: true, nodeId: "a" }],
    ["reservations of stopped tasks do not count", 512, [node("a", 512)], [task("a", 512, "shutdown")], { fits: true, nodeId: "a" }],
    ["a drained node takes nothing", 256, [node("a", 4096, { availability: "drain" }), node("b", 512)], [task("b", 384)], /needs 256 MiB .* has free is 128 MiB\./],
    ["a paused node takes nothing", 64, [node("a", 4096, { availability: "pause" })], [], /no machine of the cluster is ready/],
    ["a down node takes nothing", 64, [node("a", 4096, { state: "down" })], [], /no machine of the cluster is ready/],
    ["no nodes at all", 64, [], [], /no machine of the cluster is ready/],
    ["memory spread over nodes is not enough", 512, [node("a", 512), node("b", 512)], [task("a", 256), task("b", 256)], /needs 512 MiB of memory and the most any machine of the cluster has free is 256 MiB\. No charge was made/],
    ["over-reserved nodes report 0 free", 64, [node("a", 128)], [task("a", 256)], /has free is 0 MiB/],
  ];
  it.each(cases)("%s", (_name, planMiB, nodes, tasks, expected) => {
    const verdict = checkCapacity(planMiB * MiB, nodes, tasks);
    if (expected instanceof RegExp) {
      expect(verdict.fits).toBe(false);
      if (!verdict.fits) expect(verdict.message).toMatch(expected);
    } else {
      expect(verdict).toEqual(expected);
    }
  });
});

describe("capacityRefusal (the first deploy's gate)", () => {
  const full = { capacity: async () => ({ fits: false as const, message: "The app cannot be placed: no room." }) };
  const room = { capacity: async () => ({ fits: true as const }) };
  it.each([
    ["no engine", null, { liveDeployId: null }, null],
    ["one Docker engine, which reserves nothing ahead (always fits)", room, { liveDeployId: null }, null],
    ["first deploy, room left", room, { liveDeployId: null }, null],
    ["first deploy, no room: refused with the engine's sentence", full, { liveDeployId: null }, { outcome: "refused", code: "INSUFFICIENT_CAPACITY", message: "The app cannot be placed: no room." }],
    ["a later deploy is not checked", full, { liveDeployId: "d1" }, null],
  ])("%s", async (_name, runtime, app, refusal) => {
    expect(await capacityRefusal(runtime, app, 256 * MiB)).toEqual(refusal);
  });
});
