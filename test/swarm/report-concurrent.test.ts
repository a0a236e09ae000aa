/**
 * Two operator reports (GET /admin/api/runtime) at the same time on a two-node swarm whose worker
 * lets containers gain privileges. Each report runs its own no-new-privileges probe job on every
 * node (src/runtime/swarm-probe.ts): the two jobs must not share a name (a second service of the
 * same name is refused by the swarm), each report must read its own job's tasks and remove its
 * own job, and when both have answered no probe job is left and no probe container still runs.
 * Through a real `wrangler dev` (as test/swarm/control-plane.test.ts), against a real swarm.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SwarmRuntime } from "../../src/runtime/swarm";
import { PROBE_LABEL } from "../../src/runtime/swarm-report-rules";
import { E2E_OPERATOR_TOKEN, type Worker, startWorker } from "../e2e/harness";
import { probeContext } from "../runtime/images";
import { tarStream } from "../runtime/tar";
import { type TestSwarm, startSwarm } from "./swarm-env";

const run = promisify(execFile);

let s: TestSwarm;
let worker: Worker;
let workerNode: { id: string; hostname: string };

const docker = (sock: string, ...args: string[]) => run("docker", ["-H", `unix://${sock}`, ...args]).then((r) => r.stdout.trim());
const manager = (...args: string[]) => docker(s.managerSock, ...args);
const lines = (text: string) => text.split("\n").filter(Boolean);

beforeAll(async () => {
  s = await startSwarm({ name: "cprr", nodes: 2, subnet: "10.77.5", allowNewPrivileges: 2 });
  const [id, hostname] = (await manager("node", "ls", "--filter", "role=worker", "--format", "{{.ID}} {{.Hostname}}")).split(" ");
  workerNode = { id: id!, hostname: hostname! };
  // The report's probe image, pushed to the registry once, as README "Deploying" has the operator do.
  const probe = await new SwarmRuntime({ url: s.managerUrl, registry: s.registry }).build({ context: tarStream(probeContext(await readFile("/bin/busybox"))), dockerfile: "Dockerfile", tag: "cp-probe:1" });
  expect(probe).toEqual({ ok: true, image: "cp-probe:1" });
  worker = await startWorker({ RUNTIME_URL: s.managerUrl, RUNTIME_KIND: "swarm", REGISTRY: s.registry, SWARM_PROBE_IMAGE: `${s.registry}/cp-probe:1` });
}, 240_000);

afterAll(async () => {
  await worker?.stop();
  await s?.down();
}, 120_000);

async function report(): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${worker.url}/admin/api/runtime`, { headers: { Authorization: `Bearer ${E2E_OPERATOR_TOKEN}` } });
  return { status: res.status, body: await res.json() };
}

interface ServiceEvent {
  Action: string;
  Actor: { ID: string; Attributes: { name?: string } };
  timeNano: number;
}

describe("two operator reports at the same time", () => {
  it("both answer the same, right problems, each with its own probe job, and leave no probe job behind and no probe container running", async () => {
    const since = (Date.now() / 1000 - 1).toFixed(3);
    const [first, second] = await Promise.all([report(), report()]);
    const until_ = (Date.now() / 1000 + 1).toFixed(3);

    const expected = {
      kind: "swarm",
      api_version: expect.stringMatching(/^\d+\.\d+$/),
      problems: [
        `Node ${workerNode.hostname} (${workerNode.id.slice(0, 12)}) lets containers gain privileges: set "no-new-privileges": true in /etc/docker/daemon.json there and restart dockerd.`,
      ],
      reconciler: { last_run: null, last_engine_run: null },
      retire_ledger: { length: 0 },
    };
    expect(first).toEqual({ status: 200, body: expected });
    expect(second).toEqual({ status: 200, body: expected });

    // The swarm's own record: two probe jobs, of different names, each created and removed once,
    // and both existed at the same time (so the reports did overlap).
    const events = lines(await manager("events", "--since", since, "--until", until_, "--filter", "type=service", "--format", "{{json .}}")).map((l) => JSON.parse(l) as ServiceEvent);
    const created = events.filter((e) => e.Action === "create");
    const removed = events.filter((e) => e.Action === "remove");
    expect(created).toHaveLength(2);
    expect(new Set(created.map((e) => e.Actor.ID)).size).toBe(2);
    expect(new Set(created.map((e) => e.Actor.Attributes.name)).size).toBe(2);
    for (const e of created) expect(e.Actor.Attributes.name).toMatch(/^cp-probe-/);
    expect(removed.map((e) => e.Actor.ID).sort()).toEqual(created.map((e) => e.Actor.ID).sort());
    expect(Math.max(...created.map((e) => e.timeNano))).toBeLessThan(Math.min(...removed.map((e) => e.timeNano)));

    // Nothing left behind: no probe job, and no probe container still running on either node.
    // (Docker 20.10 keeps a removed job's finished tasks and their exited containers, one per node
    // per report: moby/moby#42789. That is the engine's doing, and the same for a report alone.)
    expect(await manager("service", "ls", "-q", "--filter", `label=${PROBE_LABEL}`)).toBe("");
    for (const sock of [s.managerSock, s.workerSock!]) expect(await docker(sock, "ps", "-q", "--filter", `label=${PROBE_LABEL}`)).toBe("");
  });
});
