/**
 * The Docker adapter against the real engine, reached as the Worker reaches it: over HTTP through
 * the localhost forwarder to /var/run/docker.sock. CI installs Docker, so a missing socket fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerRuntime } from "../../src/runtime/docker";
import { type DockerForwarder, dockerSocketAvailable, startDockerForwarder } from "../../scripts/lib/docker-forwarder";
import { describeRuntimeConformance } from "../runtime/conformance";
import * as img from "../runtime/images";
import { tarStream } from "../runtime/tar";
import { readFile } from "node:fs/promises";
import { connect } from "node:net";

const SOCKET = "/var/run/docker.sock";

/** The forwarder, after checking the socket is there; fails (never skips) when it is not. */
async function forwarder(): Promise<DockerForwarder> {
  if (!(await dockerSocketAvailable(SOCKET))) {
    throw new Error(`${SOCKET} is missing or not writable: install and start Docker (.ci/run does) to run the runtime tests.`);
  }
  return startDockerForwarder({ socketPath: SOCKET });
}

/** Raw engine calls for what the interface does not show (HostConfig) and for leftovers. */
async function engine<T>(base: string, path: string, init?: RequestInit): Promise<T> {
  const version = (await fetch(`${base}/_ping`)).headers.get("Api-Version");
  const res = await fetch(`${base}/v${version}${path}`, init);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

describeRuntimeConformance("Docker Engine", async () => {
  const fwd = await forwarder();
  // busybox httpd as PID 1 ignores SIGTERM; a short grace period keeps stop and restart quick.
  const runtime = new DockerRuntime({ url: fwd.url, stopTimeoutSeconds: 1 });
  return {
    runtime,
    engineUrl: fwd.url,
    tellsOomKill: true,
    cleanup: async () => {
      // Failed builds leave untagged intermediate images; every layer carries the suite's label.
      const left = await engine<{ Id: string }[]>(fwd.url, `/images/json?all=1&filters=${encodeURIComponent(JSON.stringify({ label: ["cp-conformance"], dangling: ["true"] }))}`);
      for (const image of left) await engine(fwd.url, `/images/${image.Id}?force=1`, { method: "DELETE" });
      await fwd.close();
    },
  };
});

describe("Docker Engine: plan limits", () => {
  let fwd: DockerForwarder;
  let runtime: DockerRuntime;
  const tag = `cp-conformance-limits-${Date.now().toString(36)}:1`;

  beforeAll(async () => {
    fwd = await forwarder();
    runtime = new DockerRuntime({ url: fwd.url, stopTimeoutSeconds: 1 });
    const outcome = await runtime.build({ context: tarStream(img.conformanceContext(await readFile("/bin/busybox"))), dockerfile: img.DOCKERFILES.web, tag });
    expect(outcome.ok).toBe(true);
  });

  afterAll(async () => {
    await runtime?.removeImage(tag);
    await fwd?.close();
  });

  it("reach the container's HostConfig, published on loopback only, with the labels", async () => {
    const instance = await runtime.start({
      image: tag,
      name: `cp-conformance-limits-${Date.now().toString(36)}`,
      labels: { "cp-conformance": "limits", app_id: "a1" },
      env: { A: "1" },
      port: img.PORT,
      limits: { memoryBytes: 96 * 1024 * 1024, cpus: 0.25 },
    });
    try {
      const c = await engine<{
        HostConfig: { Memory: number; NanoCpus: number; PortBindings: Record<string, { HostIp: string }[]> };
        Config: { Env: string[]; Labels: Record<string, string> };
      }>(fwd.url, `/containers/${instance.id}/json`);
      expect(c.HostConfig.Memory).toBe(96 * 1024 * 1024);
      expect(c.HostConfig.NanoCpus).toBe(250_000_000);
      expect(c.HostConfig.PortBindings[`${img.PORT}/tcp`]?.[0]?.HostIp).toBe("127.0.0.1");
      expect(c.Config.Labels).toMatchObject({ "cp-conformance": "limits", app_id: "a1" });
      expect(c.Config.Env).toContain("A=1");
      expect(c.Config.Env.some((kv) => kv.startsWith("PORT="))).toBe(false);
    } finally {
      await runtime.remove(instance.id);
    }
  });
});

describe("Docker forwarder", () => {
  it("serves many connections at once and answers after the client half-closes", async () => {
    const fwd = await forwarder();
    try {
      const pings = await Promise.all(Array.from({ length: 20 }, () => fetch(`${fwd.url}/_ping`).then((r) => r.text())));
      expect(pings).toEqual(Array(20).fill("OK"));
      // HTTP/1.0 request, then FIN: the reply must still come back on the open half.
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect({ host: "127.0.0.1", port: Number(new URL(fwd.url).port), allowHalfOpen: true });
        let text = "";
        socket.on("data", (chunk) => (text += chunk.toString()));
        socket.on("end", () => resolve(text));
        socket.on("error", reject);
        socket.end("GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n");
      });
      expect(reply).toMatch(/^HTTP\/1\.[01] 200/);
      expect(reply.endsWith("OK")).toBe(true);
    } finally {
      await fwd.close();
    }
  });
});
