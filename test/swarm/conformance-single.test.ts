/**
 * The Swarm adapter passes the runtime conformance suite on a single-node swarm whose registry
 * wants credentials: the adapter signs in with X-Registry-Auth, and without them a push is refused.
 */
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { readFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { SwarmRuntime } from "../../src/runtime/swarm";
import { RESTART_ATTEMPTS } from "../../src/runtime/swarm-rules";
import { RuntimeUnavailableError } from "../../src/runtime/types";
import { describeRuntimeConformance } from "../runtime/conformance";
import * as img from "../runtime/images";
import { tarStream } from "../runtime/tar";
import { type TestSwarm, startSwarm } from "./swarm-env";

const run = promisify(execFile);
const registryAuth = { username: "cp", password: `pw-${Math.random().toString(36).slice(2)}` };
/** The swarm's restart policy: RESTART_ATTEMPTS restarts, 5 s apart, each a new task to schedule and start. */
const SWARM_RESTARTS = { maxRestarts: RESTART_ATTEMPTS, giveUpMs: 90_000 };
let pending: Promise<TestSwarm> | undefined;
const swarm = () => (pending ??= startSwarm({ name: "cpss", nodes: 1, subnet: "10.77.1", registryAuth }));

afterAll(async () => {
  if (pending) await (await pending).down();
});

describeRuntimeConformance("Docker Swarm, one node", async () => {
  const s = await swarm();
  // With the registry's API: removing an image deletes its tag there too (checked below).
  return {
    runtime: new SwarmRuntime({ url: s.managerUrl, registry: s.registry, registryApi: `http://${s.registry}`, registryAuth, stopGraceSeconds: 1 }),
    restartPolicy: SWARM_RESTARTS,
    // One node: every task runs on the manager, whose engine keeps the ended task's container.
    tellsOomKill: true,
    switchesInPlace: true,
  };
}, { engineSettings: false });

describe("Docker Swarm, one node: registry credentials", () => {
  it("a push without credentials, or with wrong ones, is refused by the registry", async () => {
    const s = await swarm();
    for (const auth of [undefined, { username: "cp", password: "wrong-password" }]) {
      const runtime = new SwarmRuntime({ url: s.managerUrl, registry: s.registry, ...(auth ? { registryAuth: auth } : {}) });
      const tag = `cp-conformance-noauth-${Date.now().toString(36)}:1`;
      try {
        const built = runtime.build({ context: tarStream(img.conformanceContext(await readFile("/bin/busybox"))), dockerfile: img.DOCKERFILES.web, tag });
        await expect(built).rejects.toThrow(RuntimeUnavailableError);
        await expect(built).rejects.toThrow(/Pushing the image to the registry failed: .*(no basic auth credentials|unauthorized)/);
      } finally {
        await runtime.removeImage(tag);
      }
    }
  });
});

describe("Docker Swarm, one node: images in the registry", () => {
  it("removeImage deletes the tag in the registry too; a missing one is fine", async () => {
    const s = await swarm();
    const runtime = new SwarmRuntime({ url: s.managerUrl, registry: s.registry, registryApi: `http://${s.registry}`, registryAuth });
    const name = `cp-conformance-registry-${Date.now().toString(36)}`;
    const manifest = () =>
      fetch(`http://${s.registry}/v2/${name}/manifests/1`, {
        method: "HEAD",
        headers: { Accept: "application/vnd.docker.distribution.manifest.v2+json", Authorization: `Basic ${btoa(`${registryAuth.username}:${registryAuth.password}`)}` },
      }).then((r) => r.status);
    expect((await runtime.build({ context: tarStream(img.conformanceContext(await readFile("/bin/busybox"))), dockerfile: img.DOCKERFILES.web, tag: `${name}:1` })).ok).toBe(true);
    expect(await manifest()).toBe(200);
    await runtime.removeImage(`${name}:1`);
    expect(await manifest()).toBe(404);
    expect(await runtime.hasImage(`${name}:1`)).toBe(false);
    await runtime.removeImage(`${name}:1`);
  });

  it("keeps a manifest another tag still points at (an unchanged rebuild)", async () => {
    const s = await swarm();
    const runtime = new SwarmRuntime({ url: s.managerUrl, registry: s.registry, registryApi: `http://${s.registry}`, registryAuth });
    const name = `cp-conformance-shared-${Date.now().toString(36)}`;
    const status = (tag: string) =>
      fetch(`http://${s.registry}/v2/${name}/manifests/${tag}`, {
        method: "HEAD",
        headers: { Accept: "application/vnd.docker.distribution.manifest.v2+json", Authorization: `Basic ${btoa(`${registryAuth.username}:${registryAuth.password}`)}` },
      }).then((r) => r.status);
    for (const tag of ["old", "new"]) {
      expect((await runtime.build({ context: tarStream(img.conformanceContext(await readFile("/bin/busybox"))), dockerfile: img.DOCKERFILES.web, tag: `${name}:${tag}` })).ok).toBe(true);
    }
    await runtime.removeImage(`${name}:old`);
    expect(await status("new")).toBe(200);
    await runtime.removeImage(`${name}:new`);
    expect(await status("new")).toBe(404);
  });
});

describe("Docker Swarm, one node: a port held by another program", () => {
  it("moves the instance to another port of the range", async () => {
    const s = await swarm();
    // Random 0: the adapter's first choice is the range's first port, which a listener on the node holds.
    const runtime = new SwarmRuntime({ url: s.managerUrl, registry: s.registry, registryAuth, stopGraceSeconds: 1, portRange: { first: 21000, last: 21009 }, random: () => 0 });
    const holder = spawn("nsenter", ["--net=/var/run/netns/cpss1", "/bin/busybox", "nc", "-l", "-p", "21000"], { stdio: "ignore" });
    const tag = `cp-conformance-held-${Date.now().toString(36)}:1`;
    let id: string | undefined;
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await runtime.build({ context: tarStream(img.conformanceContext(await readFile("/bin/busybox"))), dockerfile: img.DOCKERFILES.web, tag })).ok).toBe(true);
      const instance = await runtime.start({ image: tag, name: `cp-conformance-held-${Date.now().toString(36)}`, labels: { "cp-conformance": "held" }, env: {}, port: img.PORT, limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 } });
      id = instance.id;
      expect(instance.url).toBe(`http://${s.managerAddr}:21001`);
      const res = await fetch(instance.url);
      expect(await res.text()).toContain(img.PAGE_TEXT);
    } finally {
      holder.kill();
      if (id) await runtime.remove(id);
      await runtime.removeImage(tag);
    }
  });
});

describe("Docker Swarm, one node: the app's health check as the task's own", () => {
  it("passes the check on as the task's Healthcheck; the task counts as running once healthy", async () => {
    const s = await swarm();
    const runtime = new SwarmRuntime({ url: s.managerUrl, registry: s.registry, registryAuth, stopGraceSeconds: 1 });
    // The check runs with the image's shell and wget: busybox installs both.
    const context = img.conformanceContext(await readFile("/bin/busybox")).map((entry) =>
      entry.name === img.DOCKERFILES.web ? { ...entry, data: String(entry.data).replace("COPY busybox /bin/busybox", 'COPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", "/bin"]') } : entry,
    );
    const tag = `cp-conformance-health-${Date.now().toString(36)}:1`;
    let id: string | undefined;
    try {
      expect((await runtime.build({ context: tarStream(context), dockerfile: img.DOCKERFILES.web, tag })).ok).toBe(true);
      const check = { path: "/index.html", expect: "2xx-3xx" as const, timeoutSeconds: 2, graceSeconds: 0, intervalSeconds: 1, retries: 2 };
      const instance = await runtime.start({ image: tag, name: `cp-conformance-health-${Date.now().toString(36)}`, labels: { "cp-conformance": "health" }, env: {}, port: img.PORT, limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 }, healthCheck: check });
      id = instance.id;
      const docker = (...args: string[]) => run("docker", ["-H", `unix://${s.managerSock}`, ...args]).then((r) => r.stdout.trim());
      const test = JSON.parse(await docker("service", "inspect", instance.id, "--format", "{{json .Spec.TaskTemplate.ContainerSpec.Healthcheck.Test}}")) as string[];
      expect(test[0]).toBe("CMD-SHELL");
      expect(test[1]).toContain("'http://127.0.0.1:8080/index.html'");
      const container = await docker("ps", "-q", "--filter", `label=com.docker.swarm.service.id=${instance.id}`);
      expect(await docker("inspect", "--format", "{{.State.Health.Status}}", container)).toBe("healthy");
      expect(await (await fetch(instance.url)).text()).toContain(img.PAGE_TEXT);
    } finally {
      if (id) await runtime.remove(id);
      await runtime.removeImage(tag);
    }
  });
});
