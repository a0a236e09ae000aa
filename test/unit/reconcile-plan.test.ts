import { describe, expect, it } from "vitest";
import { type AppRecord, type EngineView, type ReconcileAction, type Records, countActions, planReconcile, sameId } from "../../src/apps/reconcile-plan";

// The reconciler (README, Operations): what no record explains is removed once it is older than
// the grace period; what a record says should run and is gone is brought back; objects of apps
// this control plane has no record of are left alone unless a port row of ours names them.

const NOW = 1_000_000_000;
const GRACE = 60_000;
const OLD = NOW - GRACE - 1;
const YOUNG = NOW - 1000;

const ID_A1 = "a1a1a1a1a1a1a1a1a1a1";
const ID_A2 = "a2a2a2a2a2a2a2a2a2a2";
const ID_X = "x0x0x0x0x0x0x0x0x0x0";

const app = (over: Partial<AppRecord> = {}): AppRecord => ({ id: "A", status: "running", instanceId: ID_A1, image: "control-plane/app-A:d2", keptImages: ["control-plane/app-A:d1", "control-plane/app-A:d2"], ...over });
const inst = (id: string, appId = "A", createdAt = OLD, name = `cp-${id.slice(0, 4)}`) => ({ id, appId, createdAt, name });
const img = (id: string, appId = "A", createdAt = OLD) => ({ id, appId, createdAt });
const view = (over: Partial<EngineView> = {}): EngineView => ({ instances: [inst(ID_A1)], networks: [{ id: "control-plane-app-A", appId: "A", createdAt: OLD }], images: [img("control-plane/app-A:d2")], ports: [], ...over });
const recs = (over: Partial<Records> = {}): Records => ({ apps: [app()], retiring: [], ...over });

describe("planReconcile", () => {
  it.each<[string, EngineView, Records, ReconcileAction[], number]>([
    ["engine and records agree: nothing to do", view(), recs(), [], 0],
    ["an old instance no record names is removed", view({ instances: [inst(ID_A1), inst(ID_A2)] }), recs(), [{ kind: "remove_instance", appId: "A", id: ID_A2 }], 0],
    ["a young one is left (a change may be making it)", view({ instances: [inst(ID_A1), inst(ID_A2, "A", YOUNG)] }), recs(), [], 0],
    ["one the retire ledger holds is left to its drain", view({ instances: [inst(ID_A1), inst(ID_A2)] }), recs({ retiring: [{ appId: "A", instanceId: ID_A2, image: null }] }), [], 0],
    ["the app's instance named by a short id is its own", view({ instances: [inst(ID_A1)] }), recs({ apps: [app({ instanceId: ID_A1.slice(0, 12) })] }), [], 0],
    ["a stopped app's stopped instance is explained", view(), recs({ apps: [app({ status: "stopped" })] }), [], 0],
    ["a failed app's leftover instance is removed", view(), recs({ apps: [app({ status: "failed", instanceId: null, image: null })] }), [{ kind: "remove_instance", appId: "A", id: ID_A1 }], 0],
    [
      "a removed instance's port row goes with it",
      view({ instances: [inst(ID_A1), inst(ID_A2)], ports: [{ port: 20001, appId: "A", instanceId: ID_A2, instanceName: "cp-a2a2", allocatedAt: OLD }] }),
      recs(),
      [{ kind: "remove_instance", appId: "A", id: ID_A2 }, { kind: "free_port", appId: "A", port: 20001 }],
      0,
    ],
    [
      "a port row whose instance is gone is freed once old",
      view({ ports: [{ port: 20002, appId: "A", instanceId: null, instanceName: "cp-gone", allocatedAt: OLD }, { port: 20003, appId: "A", instanceId: null, instanceName: "cp-new", allocatedAt: YOUNG }] }),
      recs(),
      [{ kind: "free_port", appId: "A", port: 20002 }],
      0,
    ],
    [
      "a port row naming a live instance by name (before its id was written) stays",
      view({ ports: [{ port: 20004, appId: "A", instanceId: null, instanceName: "cp-a1a1", allocatedAt: OLD }] }),
      recs(),
      [],
      0,
    ],
    ["an image no deploy keeps is removed", view({ images: [img("control-plane/app-A:d2"), img("control-plane/app-A:d0")] }), recs(), [{ kind: "remove_image", appId: "A", image: "control-plane/app-A:d0" }], 0],
    ["a kept image (rollback) stays", view({ images: [img("control-plane/app-A:d1"), img("control-plane/app-A:d2")] }), recs(), [], 0],
    ["a young image (a build just ended) stays", view({ images: [img("control-plane/app-A:d3", "A", YOUNG)] }), recs(), [], 0],
    ["a retiring instance's image stays", view({ images: [img("control-plane/app-A:d2"), img("control-plane/app-A:d0")] }), recs({ retiring: [{ appId: "A", instanceId: ID_A2, image: "control-plane/app-A:d0" }] }), [], 0],
    ["a running app whose instance is gone is restored", view({ instances: [] }), recs(), [{ kind: "restore", appId: "A", instanceId: ID_A1 }], 0],
    ["a stopped app whose instance is gone is not", view({ instances: [] }), recs({ apps: [app({ status: "stopped" })] }), [], 0],
    ["an app never built is not", view({ instances: [] }), recs({ apps: [app({ status: "running", image: null, instanceId: null })] }), [], 0],
    [
      "another control plane's objects are foreign and left alone",
      view({ instances: [inst(ID_A1), inst(ID_X, "X")], images: [img("control-plane/app-A:d2"), img("control-plane/app-X:1", "X")], networks: [{ id: "control-plane-app-X", appId: "X", createdAt: OLD }] }),
      recs(),
      [],
      3,
    ],
    [
      "an unknown app's instance a port row of ours names is ours: removed with its row",
      view({ instances: [inst(ID_A1), inst(ID_X, "X")], ports: [{ port: 20005, appId: "X", instanceId: ID_X, instanceName: "cp-x0x0", allocatedAt: OLD }] }),
      recs(),
      [{ kind: "remove_instance", appId: "X", id: ID_X }, { kind: "free_port", appId: "X", port: 20005 }],
      0,
    ],
    [
      "order: instances, ports, images, restores",
      view({ instances: [inst(ID_A2)], images: [img("control-plane/app-A:d0")], ports: [{ port: 20006, appId: "A", instanceId: ID_A2, instanceName: "cp-a2a2", allocatedAt: OLD }] }),
      recs(),
      [
        { kind: "remove_instance", appId: "A", id: ID_A2 },
        { kind: "free_port", appId: "A", port: 20006 },
        { kind: "remove_image", appId: "A", image: "control-plane/app-A:d0" },
        { kind: "restore", appId: "A", instanceId: ID_A1 },
      ],
      0,
    ],
    ["a swarm (no port table) plans no port rows", view({ ports: null, instances: [] }), recs(), [{ kind: "restore", appId: "A", instanceId: ID_A1 }], 0],
  ])("%s", (_name, engine, records, actions, foreign) => {
    expect(planReconcile(engine, records, NOW, GRACE)).toEqual({ actions, foreign });
  });
});

describe("sameId", () => {
  it.each<[string, string, boolean]>([
    ["abc", "abc", true],
    ["a1a1a1a1a1a1", ID_A1, true],
    [ID_A1, "a1a1a1a1a1a1", true],
    ["a1a1a1a1a1a", ID_A1, false],
    [ID_A1, ID_A2, false],
  ])("%s ~ %s: %s", (a, b, same) => expect(sameId(a, b)).toBe(same));
});

describe("countActions", () => {
  it("counts what was done, by kind, and what failed", () => {
    expect(
      countActions([
        { action: "remove_instance", outcome: "done" },
        { action: "remove_instance", outcome: "done" },
        { action: "remove_image", outcome: "failed" },
        { action: "free_port", outcome: "done" },
        { action: "restore", outcome: "done" },
      ]),
    ).toEqual({ removed_instances: 2, freed_ports: 1, removed_images: 0, restored: 1, failed: 1 });
  });
});
