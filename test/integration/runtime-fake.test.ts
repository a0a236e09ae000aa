/**
 * The Docker adapter inside workerd reaches the fake engine the test config starts (binding
 * RUNTIME_URL) over real HTTP: a streamed build context, a start, and the instance's page.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DockerRuntime } from "../../src/runtime/docker";
import { DOCKERFILES, PAGE_TEXT, PORT, conformanceContext } from "../runtime/images";
import { tarStream } from "../runtime/tar";

const runtimeUrl = (env as unknown as { RUNTIME_URL: string }).RUNTIME_URL;

describe("Docker adapter in workerd against the fake engine", () => {
  it("pings, builds from a streamed context, starts, and the instance answers", async () => {
    const runtime = new DockerRuntime({ url: runtimeUrl });
    expect((await runtime.ping()).apiVersion).toMatch(/^\d+\.\d+$/);

    const tag = `cp-conformance-workerd-${Date.now()}:1`;
    const output: string[] = [];
    // Small chunks: the body leaves workerd as a stream of several parts, not one buffer.
    const context = tarStream(conformanceContext(new TextEncoder().encode("stand-in busybox")), 1024);
    const outcome = await runtime.build({ context, dockerfile: DOCKERFILES.web, tag, onOutput: (t) => void output.push(t) });
    expect(outcome).toEqual({ ok: true, image: tag });
    expect(output.join("")).toContain("Successfully tagged");

    const instance = await runtime.start({
      image: tag,
      name: `cp-conformance-workerd-${Date.now()}`,
      labels: { "cp-conformance": "workerd" },
      env: {},
      port: PORT,
      limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 },
    });
    try {
      const res = await fetch(instance.url);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(PAGE_TEXT);
    } finally {
      await runtime.remove(instance.id);
      await runtime.removeImage(tag);
    }
    expect(await runtime.hasImage(tag)).toBe(false);
  });
});

describe("builder fallback in workerd against an engine without BuildKit (the fake engine)", () => {
  it("RUNTIME_BUILDER=buildkit still builds, with the classic builder, and says so in its output", async () => {
    const runtime = new DockerRuntime({ url: runtimeUrl, builder: "buildkit" });
    const tag = `cp-conformance-fallback-${Date.now()}:1`;
    const output: string[] = [];
    const context = tarStream(conformanceContext(new TextEncoder().encode("stand-in busybox")), 1024);
    const outcome = await runtime.build({ context, dockerfile: DOCKERFILES.web, tag, cacheScope: "0123456789abcdef0123456789abcdef", onOutput: (t) => void output.push(t) });
    expect(outcome).toEqual({ ok: true, image: tag });
    expect(output.join("")).toMatch(/^Step 1\/\d+ : FROM scratch$/m);
    await runtime.removeImage(tag);
  });
});
