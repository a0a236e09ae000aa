/**
 * Two swarm nodes on one machine (manager and worker, each its own dockerd and network namespace)
 * and a local registry: the conformance suite passes across both nodes; an app pinned to the
 * worker is built on the manager, pulled by the worker through the registry and answers on the
 * worker's address; draining the worker moves it to the manager, where it answers again.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SwarmRuntime } from "../../src/runtime/swarm";
import { RESTART_ATTEMPTS } from "../../src/runtime/swarm-rules";
import { describeRuntimeConformance } from "../runtime/conformance";
import * as img from "../runtime/images";
import { tarStream } from "../runtime/tar";
import { type TestSwarm, startSwarm } from "./swarm-env";
import { type DockerForwarder, startDockerForwarder } from "../../scripts/lib/docker-forwarder";

const run = promisify(execFile);
let pending: Promise<TestSwarm> | undefined;
const swarm = () => (pending ??= startSwarm({ name: "cpsw", nodes: 2, subnet: "10.77.0" }));

afterAll(async () => {
  if (pending) await (await pending).down();
});

/** The worker's Engine API over loopback HTTP: the node route of SWARM_NODE_ENGINE_URL in these tests. */
let workerEngine: DockerForwarder | undefined;
afterAll(async () => {
  await workerEngine?.close();
});
/** The adapter's `nodeEngineUrl`: the worker's engine at its forwarder (the manager is asked directly). */
async function nodeEngineUrl(s: TestSwarm): Promise<(address: string) => string | null> {
  workerEngine ??= await startDockerForwarder({ socketPath: s.workerSock! });
  const url = workerEngine.url;
  return (address) => (address === s.workerAddr ? url : null);
}

describeRuntimeConformance("Docker Swarm, two nodes", async () => {
  const s = await swarm();
  const runtime = new SwarmRuntime({ url: s.managerUrl, registry: s.registry, stopGraceSeconds: 1, nodeEngineUrl: await nodeEngineUrl(s) });
  // A task may run on either node; each node's engine is asked for its OOM kills and stats.
  return { runtime, restartPolicy: { maxRestarts: RESTART_ATTEMPTS, giveUpMs: 90_000 }, tellsOomKill: true, switchesInPlace: true };
}, { engineSettings: false });

describe("Docker Swarm, two nodes: placement through the registry", () => {
  let s: TestSwarm;
  let runtime: SwarmRuntime;
  const stamp = Date.now().toString(36);
  const tag = `cp-swarm-pinned-${stamp}:1`;
  const docker = (sock: string, ...args: string[]) => run("docker", ["-H", `unix://${sock}`, ...args]).then((r) => r.stdout.trim());

  const probeTag = `cp-probe-${stamp}:1`;

  beforeAll(async () => {
    s = await swarm();
    runtime = new SwarmRuntime({ url: s.managerUrl, registry: s.registry, stopGraceSeconds: 1, probeImage: `${s.registry}/${probeTag}` });
    const busybox = await readFile("/bin/busybox");
    const outcome = await runtime.build({ context: tarStream(img.conformanceContext(busybox)), dockerfile: img.DOCKERFILES.web, tag });
    expect(outcome).toEqual({ ok: true, image: tag });
    expect(await runtime.build({ context: tarStream(img.probeContext(busybox)), dockerfile: "Dockerfile", tag: probeTag })).toEqual({ ok: true, image: probeTag });
  });

  it("is built on the manager, pulled by the worker, answers on the worker, then on the manager after a drain", async () => {
    const workerId = await docker(s.managerSock, "node", "ls", "-q", "--filter", "role=worker");
    const managerId = await docker(s.managerSock, "node", "ls", "-q", "--filter", "role=manager");
    // Only the worker is available when the app starts: the manager is paused for new tasks.
    await docker(s.managerSock, "node", "update", "--availability", "pause", managerId);
    let instance;
    try {
      instance = await runtime.start({
        image: tag,
        name: `cp-swarm-pinned-${stamp}`,
        labels: { "cp-conformance": `pinned-${stamp}` },
        env: { [img.GREETING_VAR]: "on the worker" },
        port: img.PORT,
        limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 },
      });
    } finally {
      await docker(s.managerSock, "node", "update", "--availability", "active", managerId);
    }
    try {
      expect(new URL(instance.url).hostname).toBe(s.workerAddr);
      expect(await answer(`${instance.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=on the worker`);
      // The worker never built anything: it has the image only because it pulled it by digest.
      const pulled = await docker(s.workerSock!, "images", "--digests", "--format", "{{.Repository}}@{{.Digest}}");
      expect(pulled).toContain(`${s.registry}/${tag.split(":")[0]}@sha256:`);
      const port = new URL(instance.url).port;
      expect(Number(port)).toBeGreaterThanOrEqual(20000);
      expect(Number(port)).toBeLessThanOrEqual(29999);
      // Its stats come from the worker's own engine (the node route); without that route there are none.
      const routed = new SwarmRuntime({ url: s.managerUrl, registry: s.registry, nodeEngineUrl: await nodeEngineUrl(s) });
      const stats = await waitFor(async () => {
        const reading = await routed.stats(instance.id);
        return reading?.memoryBytes && reading.cpuPercentOfOneCpu !== null ? reading : null;
      }, 30_000);
      expect(stats.memoryBytes).toBeGreaterThan(0);
      expect(stats.memoryBytes).toBeLessThanOrEqual(64 * 1024 * 1024);
      expect(stats.cpuPercentOfOneCpu).toBeGreaterThanOrEqual(0);
      expect(await runtime.stats(instance.id)).toBeNull();

      await docker(s.managerSock, "node", "update", "--availability", "drain", workerId);
      const moved = await waitFor(async () => {
        const state = await runtime.inspect(instance.id);
        return state?.url && new URL(state.url).hostname === s.managerAddr ? state.url : null;
      }, 60_000);
      expect(await answer(`${moved}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=on the worker`);
    } finally {
      await runtime.remove(instance.id);
      await docker(s.managerSock, "node", "update", "--availability", "active", workerId).catch(() => undefined);
    }
  });

  it("reports nothing to fix on a sound swarm (both nodes pass the no-new-privileges probe), and the drained state of every node when drained", async () => {
    expect(await runtime.report()).toEqual([]);
    // The probe job is gone once the report is out.
    expect(await docker(s.managerSock, "service", "ls", "-q", "--filter", "label=control-plane.probe")).toBe("");
    const ids = (await docker(s.managerSock, "node", "ls", "-q")).split("\n");
    try {
      for (const id of ids) await docker(s.managerSock, "node", "update", "--availability", "drain", id);
      expect(await runtime.report()).toEqual(["No node of the swarm is ready and active: apps cannot be placed."]);
      expect(await runtime.capacity(1024)).toMatchObject({ fits: false });
    } finally {
      for (const id of ids) await docker(s.managerSock, "node", "update", "--availability", "active", id);
    }
  });

  it("checks a plan's memory against what the nodes have left", async () => {
    expect(await runtime.capacity(64 * 1024 * 1024)).toMatchObject({ fits: true });
    const verdict = await runtime.capacity(2 ** 50);
    expect(verdict).toMatchObject({ fits: false });
    if (!verdict.fits) expect(verdict.message).toMatch(/^The app cannot be placed: its plan needs 1073741824 MiB of memory and the most any machine of the cluster has free is \d+ MiB\./);
  });

  afterAll(async () => {
    await runtime?.removeImage(tag);
  });
});

async function answer(url: string): Promise<string> {
  return waitFor(async () => {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return res.status === 200 ? await res.text() : null;
    } catch {
      return null;
    }
  }, 15_000);
}

async function waitFor<T>(check: () => Promise<T | null | undefined | "" | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("Timed out.");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
