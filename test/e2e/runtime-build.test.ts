/**
 * Builds on the real engine with each builder (fast rebuilds): BuildKit (`version=2`) and the
 * classic builder, their progress as readable lines, and the build cache kept per app and never
 * shared with another app's build: another account's identical Dockerfile and context must not
 * reuse the first app's RUN layers (a malicious repository probing for a tenant's secret-bearing
 * step), nor see its `RUN --mount=type=cache` directories.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DockerForwarder, dockerSocketAvailable, startDockerForwarder } from "../../scripts/lib/docker-forwarder";
import type { BuilderChoice } from "../../src/runtime/docker-build";
import { DockerRuntime } from "../../src/runtime/docker";
import type { BuildOutcome } from "../../src/runtime/types";
import { type TarEntry, tarStream } from "../runtime/tar";

const SOCKET = "/var/run/docker.sock";
const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
/** Two apps of two accounts; their scopes are what the deploy derives from each app (secret). */
const SCOPE_A = `a${run}scopeaaaaaaaaaaaaaaaa`.slice(0, 32);
const SCOPE_B = `b${run}scopebbbbbbbbbbbbbbbb`.slice(0, 32);

const bb = (script: string) => JSON.stringify(["/bin/busybox", "sh", "-c", script]);
/** Each RUN writes 16 random bytes: a reused step has the same layer, a step run anew another. */
const DOCKERFILE = ["FROM scratch", "LABEL cp-buildtest=1", "COPY busybox /bin/busybox", `RUN ${bb("/bin/busybox head -c 16 /dev/urandom > /random; echo wrote random")}`, "COPY app.txt /app.txt", `CMD ${bb("cat /app.txt")}`, ""].join("\n");
const CACHE_MOUNT = ["FROM scratch", "LABEL cp-buildtest=1", "COPY busybox /bin/busybox", "COPY app.txt /app.txt", `RUN --mount=type=cache,target=/cache ${bb("/bin/busybox ls /cache | /bin/busybox sed 's/^/in cache: /'; /bin/busybox touch /cache/left-by-an-earlier-build")}`, ""].join("\n");
/** A step that outlives the build's deadline; its unique duration finds its process on the host. */
const SLEEP_SECONDS = 40 + Math.floor(Math.random() * 500);
const SLOW = ["FROM scratch", "LABEL cp-buildtest=1", "COPY busybox /bin/busybox", `RUN ["/bin/busybox", "sleep", "${SLEEP_SECONDS}"]`, ""].join("\n");
/** Prints the memory limit of the step's cgroup (v2 or v1). */
const LIMIT = ["FROM scratch", "LABEL cp-buildtest=1", "COPY busybox /bin/busybox", `RUN ${bb("echo limit=$(/bin/busybox cat /sys/fs/cgroup/memory.max 2>/dev/null || /bin/busybox cat /sys/fs/cgroup/memory/memory.limit_in_bytes) at $(/bin/busybox date +%s%N)")}`, ""].join("\n");
const FAILING = ["FROM scratch", "LABEL cp-buildtest=1", "COPY busybox /bin/busybox", `RUN ${bb("echo about to fail; exit 3")}`, ""].join("\n");

let fwd: DockerForwarder;
let busybox: Uint8Array;
const images: string[] = [];

async function stepProcesses(): Promise<string[]> {
  const { readdir, readFile: read } = await import("node:fs/promises");
  const out: string[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const args = await read(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (args) out.push(args.replaceAll("\0", " "));
  }
  return out;
}

async function engine<T>(path: string, init?: RequestInit): Promise<T> {
  const version = (await fetch(`${fwd.url}/_ping`)).headers.get("Api-Version");
  const res = await fetch(`${fwd.url}/v${version}${path}`, init);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The image's layer digests: [busybox, random, app.txt] for DOCKERFILE. */
async function layers(tag: string): Promise<string[]> {
  return (await engine<{ RootFS: { Layers: string[] } }>(`/images/${tag}/json`)).RootFS.Layers;
}

function context(app: string, extra: TarEntry[] = []): ReadableStream<Uint8Array> {
  return tarStream([{ name: "busybox", data: busybox, mode: 0o755 }, { name: "Dockerfile", data: DOCKERFILE }, { name: "cache.Dockerfile", data: CACHE_MOUNT }, { name: "failing.Dockerfile", data: FAILING }, { name: "slow.Dockerfile", data: SLOW }, { name: "limit.Dockerfile", data: LIMIT }, { name: "app.txt", data: app }, ...extra], 16 * 1024);
}

async function build(runtime: DockerRuntime, tag: string, app: string, options: { dockerfile?: string; cacheScope?: string; timeoutSeconds?: number } = {}): Promise<{ outcome: BuildOutcome; output: string }> {
  images.push(tag);
  let output = "";
  const outcome = await runtime.build({
    context: context(app),
    dockerfile: options.dockerfile ?? "Dockerfile",
    tag,
    ...(options.cacheScope ? { cacheScope: options.cacheScope } : {}),
    timeoutSeconds: options.timeoutSeconds ?? 120,
    onOutput: (text) => void (output += text),
  });
  return { outcome, output };
}

beforeAll(async () => {
  if (!(await dockerSocketAvailable(SOCKET))) throw new Error(`${SOCKET} is missing or not writable: install and start Docker (.ci/run does).`);
  busybox = await readFile("/bin/busybox");
  fwd = await startDockerForwarder({ socketPath: SOCKET });
});

afterAll(async () => {
  const runtime = new DockerRuntime({ url: fwd.url });
  for (const image of images) await runtime.removeImage(image);
  // Failed classic builds leave untagged intermediate images; each carries the label.
  const left = await engine<{ Id: string }[]>(`/images/json?all=1&filters=${encodeURIComponent(JSON.stringify({ label: ["cp-buildtest"], dangling: ["true"] }))}`);
  for (const image of left) await engine(`/images/${image.Id}?force=1`, { method: "DELETE" });
  await fwd?.close();
});

describe.each<[BuilderChoice, RegExp, RegExp]>([
  ["buildkit", /^#\d+ \[2\/3\] RUN /m, /^#\d+ wrote random$/m],
  ["classic", /^Step 4\/6 : RUN /m, /^wrote random$/m],
])("builder %s on dockerd", (builder, runStepLine, runOutputLine) => {
  const runtime = () => new DockerRuntime({ url: fwd.url, builder });
  const tag = (app: string, n: number) => `cp-buildtest-${builder}-${app}-${run}:${n}`;

  it("builds, streaming readable step lines with the RUN's own output", async () => {
    const { outcome, output } = await build(runtime(), tag("x", 1), "one\n");
    expect(outcome).toEqual({ ok: true, image: tag("x", 1) });
    expect(output).toMatch(runStepLine);
    expect(output).toMatch(runOutputLine);
    expect(output).not.toMatch(/moby\.buildkit\.trace|"aux"/);
  });

  it("a failing RUN is an outcome naming that step", async () => {
    const { outcome, output } = await build(runtime(), tag("fail", 1), "one\n", { dockerfile: "failing.Dockerfile" });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.failedStep).toContain('RUN ["/bin/busybox","sh","-c","echo about to fail; exit 3"]');
    expect(outcome.error).toMatch(/exit code: 3|non-zero code: 3/);
    expect(output).toContain("about to fail");
  });

  it("a build past its deadline is an outcome, and its running step is stopped on the engine", async () => {
    const started = Date.now();
    const sleeping = async () => (await stepProcesses()).some((args) => args.includes(`sleep ${SLEEP_SECONDS}`));
    const building = build(runtime(), tag("slow", 1), "one\n", { dockerfile: "slow.Dockerfile", timeoutSeconds: 5 });
    let seen = false;
    for (let i = 0; i < 40 && !seen; i++) {
      seen = await sleeping();
      if (!seen) await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen).toBe(true);
    const { outcome } = await building;
    expect(outcome).toMatchObject({ ok: false, timedOut: true });
    expect(Date.now() - started).toBeLessThan(20_000);
    // The step's process (visible on this host, where dockerd runs) goes away with the build call.
    let running = true;
    for (let i = 0; i < 40 && running; i++) {
      running = await sleeping();
      if (running) await new Promise((r) => setTimeout(r, 250));
    }
    expect(running).toBe(false);
  });

  it("a missing build file is an outcome, not a throw", async () => {
    const { outcome } = await build(runtime(), tag("missing", 1), "one\n", { dockerfile: "nowhere.Dockerfile" });
    expect(outcome.ok).toBe(false);
  });

  it("keeps an app's cache between its deploys; another account's identical build reuses none of it", async () => {
    const a1 = await build(runtime(), tag("a", 1), "one\n", { cacheScope: SCOPE_A });
    expect(a1.outcome.ok).toBe(true);
    // The app's next deploy: its last commit changed one file, copied after the RUN.
    const a2 = await build(runtime(), tag("a", 2), "two\n", { cacheScope: SCOPE_A });
    expect(a2.outcome.ok).toBe(true);
    const [la1, la2] = [await layers(tag("a", 1)), await layers(tag("a", 2))];
    expect(la2[1]).toBe(la1[1]);
    expect(la2[2]).not.toBe(la1[2]);
    expect(a2.output).not.toMatch(runOutputLine);

    // Another account, the very same Dockerfile and context: the RUN runs anew.
    const b1 = await build(runtime(), tag("b", 1), "two\n", { cacheScope: SCOPE_B });
    expect(b1.outcome.ok).toBe(true);
    expect((await layers(tag("b", 1)))[1]).not.toBe(la2[1]);
    expect(b1.output).toMatch(runOutputLine);

    // No scope: nothing is reused, not even from the same app.
    const none = await build(runtime(), tag("none", 1), "two\n");
    expect(none.outcome.ok).toBe(true);
    expect((await layers(tag("none", 1)))[1]).not.toBe(la2[1]);
  });
});

describe("BuildKit cache mounts on dockerd", () => {
  it("are kept per app: the same app sees its earlier build's files, another account's build does not", async () => {
    const runtime = new DockerRuntime({ url: fwd.url, builder: "buildkit" });
    const tag = (app: string, n: number) => `cp-buildtest-mount-${app}-${run}:${n}`;
    const first = await build(runtime, tag("a", 1), "one\n", { dockerfile: "cache.Dockerfile", cacheScope: SCOPE_A });
    expect(first.outcome.ok).toBe(true);
    expect(first.output).not.toContain("in cache: left-by-an-earlier-build");
    // app.txt changed, so the RUN after it runs again, with the app's cache directory.
    const again = await build(runtime, tag("a", 2), "two\n", { dockerfile: "cache.Dockerfile", cacheScope: SCOPE_A });
    expect(again.output).toContain("in cache: left-by-an-earlier-build");
    const other = await build(runtime, tag("b", 1), "two\n", { dockerfile: "cache.Dockerfile", cacheScope: SCOPE_B });
    expect(other.outcome.ok).toBe(true);
    expect(other.output).toMatch(/^#\d+ \[stage-0 3\/3\] RUN --mount/m);
    expect(other.output).not.toContain("in cache: left-by-an-earlier-build");
  });
});

describe("builder choice on dockerd", () => {
  it("BuildKit in Docker Engine runs a step without the build's memory limit, the classic builder with it (why auto keeps classic for limited builds)", async () => {
    const limits = { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 };
    const seen: Record<string, string> = {};
    for (const builder of ["buildkit", "classic"] as const) {
      const runtime = new DockerRuntime({ url: fwd.url, builder });
      const tag = `cp-buildtest-limit-${builder}-${run}:1`;
      images.push(tag);
      let output = "";
      const outcome = await runtime.build({ context: context("one\n"), dockerfile: "limit.Dockerfile", tag, limits, onOutput: (t) => void (output += t) });
      expect(outcome.ok).toBe(true);
      seen[builder] = /limit=(\d+|max) at/.exec(output)?.[1] ?? "";
    }
    expect(seen.classic).toBe(String(limits.memoryBytes));
    // Should this fail, the engine now applies limits to BuildKit's steps: `auto` may then use it for deploys.
    expect(seen.buildkit).not.toBe(String(limits.memoryBytes));
    expect(seen.buildkit).not.toBe("");
  });

  it("auto keeps the classic builder for a build with limits (BuildKit in Docker Engine would not apply them)", async () => {
    const runtime = new DockerRuntime({ url: fwd.url });
    const tag = `cp-buildtest-auto-${run}:1`;
    images.push(tag);
    let output = "";
    const outcome = await runtime.build({ context: context("one\n"), dockerfile: "Dockerfile", tag, limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 }, onOutput: (t) => void (output += t) });
    expect(outcome.ok).toBe(true);
    expect(output).toMatch(/^Step 4\/6 : RUN /m);
  });

  it("auto builds with BuildKit when no limits are asked", async () => {
    const { outcome, output } = await build(new DockerRuntime({ url: fwd.url }), `cp-buildtest-auto-${run}:2`, "one\n");
    expect(outcome.ok).toBe(true);
    expect(output).toMatch(/^#\d+ \[2\/3\] RUN /m);
  });
});
