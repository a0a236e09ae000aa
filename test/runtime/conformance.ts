/**
 * The conformance suite every `ContainerRuntime` adapter passes (real Docker, the fake engine,
 * any future one), after cloudflare/workers-oauth-provider's storage adapter suite. It builds
 * tiny images FROM scratch around /bin/busybox, so it runs in Node only, and removes every
 * instance and image it makes (tags `cp-conformance-*`, label `cp-conformance`).
 */
import { readFile } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CAP_DROP, MAX_RESTARTS } from "../../src/runtime/instance-settings";
import { type ContainerRuntime, InstanceExitedError, type InstanceSpec, PortTakenError, addressUrl } from "../../src/runtime/types";
import * as img from "./images";
import { tarStream } from "./tar";

/** Where Debian's busybox-static puts the binary the test images are made of. */
const BUSYBOX = "/bin/busybox";

export interface RuntimeUnderTest {
  runtime: ContainerRuntime;
  /**
   * The engine's Docker API base, to read back what the adapter sent (`docker inspect`). Given for
   * a one-engine adapter: its containers' isolation settings and networks are checked.
   */
  engineUrl?: string;
  /**
   * For an adapter with `state`: how often its engine restarts a process that exits non-zero before
   * giving up, and how long that takes at most (its restart delays included). Default: the Docker
   * adapter's MAX_RESTARTS, within 30 s.
   */
  restartPolicy?: { maxRestarts: number; giveUpMs: number };
  /** Whether `state` can tell the kernel's OOM kill of the instances this suite starts. */
  tellsOomKill?: boolean;
  cleanup?: () => Promise<void>;
}

/** Registers the suite under `describe(name)`; `setup` runs once before it. */
export function describeRuntimeConformance(name: string, setup: () => Promise<RuntimeUnderTest>, options: { engineSettings?: boolean } = {}): void {
  /** Tests of a one-engine adapter's container settings and networks (the swarm's are its services' specs). */
  const engineIt = it.skipIf(options.engineSettings === false);
  describe(`ContainerRuntime conformance: ${name}`, () => {
    const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const tag = (role: string) => `cp-conformance-${role}-${run}:1`;
    let under: RuntimeUnderTest;
    let runtime: ContainerRuntime;
    let busybox: Uint8Array;
    const instances: string[] = [];
    const images: string[] = [];
    const networks: string[] = [];
    let count = 0;

    /** Builds `role`'s Dockerfile from the shared context; the image is removed after the suite. */
    const build = async (role: keyof typeof img.DOCKERFILES, output?: string[]) => {
      const image = tag(role);
      images.push(image);
      return runtime.build({
        context: tarStream(img.conformanceContext(busybox), 16 * 1024),
        dockerfile: img.DOCKERFILES[role],
        tag: image,
        onOutput: (text) => void output?.push(text),
      });
    };
    const spec = (image: string, env: Record<string, string> = {}): InstanceSpec => ({
      image,
      name: `cp-conformance-${run}-${++count}`,
      labels: { "cp-conformance": run, app_id: `conformance-${run}` },
      env,
      port: img.PORT,
      limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 },
    });
    const restartPolicy = () => under.restartPolicy ?? { maxRestarts: MAX_RESTARTS, giveUpMs: 30_000 };
    const start = async (image: string, env?: Record<string, string>) => {
      const s = spec(image, env);
      const started = runtime.start(s);
      // Track by name too: a start that fails half-way may leave the instance behind.
      instances.push(s.name);
      const instance = await started;
      instances.push(instance.id);
      return instance;
    };

    beforeAll(async () => {
      busybox = await readFile(BUSYBOX).catch(() => {
        throw new Error(`${BUSYBOX} is missing: install Debian's busybox-static (the test images are built from it).`);
      });
      under = await setup();
      runtime = under.runtime;
      for (const role of ["web", "loopback"] as const) {
        const outcome = await build(role);
        if (!outcome.ok) throw new Error(`Building the ${role} test image failed: ${outcome.error}`);
      }
    });

    afterEach(async () => {
      for (const id of instances.splice(0)) await runtime.remove(id);
      for (const name of networks.splice(0)) await runtime.removeNetwork!(name);
    });

    afterAll(async () => {
      if (runtime) for (const image of images) await runtime.removeImage(image);
      await under?.cleanup?.();
    });

    it("ping reports the engine's API version", async () => {
      const { apiVersion } = await runtime.ping();
      expect(apiVersion).toMatch(/^\d+\.\d+$/);
    });

    it("a build succeeds, streams its steps, and the image exists", async () => {
      const output: string[] = [];
      const outcome = await build("web", output);
      expect(outcome).toEqual({ ok: true, image: tag("web") });
      expect(await runtime.hasImage(tag("web"))).toBe(true);
      // The classic builder's `Step 1/4 : FROM scratch`, or BuildKit's `#3 [1/3] COPY busybox /bin/busybox`.
      expect(output.join("")).toMatch(/^Step 1\/\d+ : FROM scratch$|^#\d+ \[1\/\d+\] COPY busybox /m);
      expect(output.every((chunk) => chunk.endsWith("\n"))).toBe(true);
    });

    it("a failing RUN step is an outcome naming that step", async () => {
      const output: string[] = [];
      const outcome = await build("failing", output);
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return;
      expect(outcome.failedStep).toMatch(new RegExp(`^(Step \\d+/\\d+ : |\\[\\d+/\\d+\\] )${escape(img.FAILING_INSTRUCTION)}$`));
      expect(outcome.error).toMatch(/non-zero code|exit code: 1/);
      expect(output.join("")).toContain(outcome.error);
      expect(await runtime.hasImage(tag("failing"))).toBe(false);
    });

    it("a missing build file is an outcome, not a throw", async () => {
      const outcome = await runtime.build({ context: tarStream(img.conformanceContext(busybox)), dockerfile: "no/such.Dockerfile", tag: tag("missing") });
      expect(outcome.ok).toBe(false);
    });

    it("start gives a URL that answers with the page", async () => {
      const instance = await start(tag("web"));
      expect(instance.url).toMatch(/^http:\/\/[^/]+:\d+$/);
      expect(await waitForText(instance.url)).toContain(img.PAGE_TEXT);
      const state = await runtime.inspect(instance.id);
      expect(state).toEqual({ id: instance.id, running: true, url: instance.url, address: instance.address, image: tag("web") });
    });

    it("an instance is addressed by engine, node and port, the same place as its URL", async () => {
      const instance = await start(tag("web"));
      expect(instance.address).toMatchObject({ engine: expect.stringMatching(/^(docker|swarm):\S+$/), node: expect.any(String), port: expect.any(Number) });
      expect(addressUrl(instance.address!)).toBe(instance.url);
    });

    it("replace (where the engine switches itself) runs the new spec under the same id at a new address; revert goes back", async (ctx) => {
      if (!runtime.replace || !runtime.revert) return ctx.skip();
      const first = await start(tag("web"), { [img.GREETING_VAR]: "first" });
      expect(await waitForText(`${first.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=first`);
      const second = await runtime.replace(first.id, { ...spec(tag("web"), { [img.GREETING_VAR]: "second" }), name: "ignored-by-replace" });
      expect(second.id).toBe(first.id);
      expect(second.url).not.toBe(first.url);
      expect(await waitForText(`${second.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=second`);
      expect(await runtime.inspect(first.id)).toMatchObject({ running: true, url: second.url });
      await runtime.revert(first.id);
      const back = await runtime.inspect(first.id);
      expect(back).toMatchObject({ running: true });
      expect(await waitForText(`${back!.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=first`);
    });

    it("replace of a stopped instance runs it again", async (ctx) => {
      if (!runtime.replace) return ctx.skip();
      const first = await start(tag("web"));
      await runtime.stop(first.id);
      const again = await runtime.replace(first.id, spec(tag("web"), { [img.GREETING_VAR]: "after stop" }));
      expect(again.id).toBe(first.id);
      expect(await waitForText(`${again.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=after stop`);
    });

    it("logLines gives timestamped lines with their stream, tail limits them, follow yields until aborted", async (ctx) => {
      if (!runtime.logLines) return ctx.skip();
      const before = Date.now() - 1000;
      const instance = await start(tag("web"));
      await waitFor(async () => (await runtime.logs(instance.id)).includes(img.STDERR_LINE), "both log lines");
      const all: { at: number; stream: string; text: string }[] = [];
      for await (const line of (await runtime.logLines(instance.id))!) all.push(line);
      expect(all).toEqual(expect.arrayContaining([expect.objectContaining({ stream: "stdout", text: img.STARTED_LINE }), expect.objectContaining({ stream: "stderr", text: img.STDERR_LINE })]));
      for (const line of all) expect(line.at).toBeGreaterThanOrEqual(before);
      const last: unknown[] = [];
      for await (const line of (await runtime.logLines(instance.id, { tail: 1 }))!) last.push(line);
      expect(last).toHaveLength(1);
      // Following: a request to the page makes httpd print nothing, so the stream stays open until aborted.
      const abort = new AbortController();
      const followed: string[] = [];
      const reading = (async () => {
        for await (const line of (await runtime.logLines!(instance.id, { follow: true, signal: abort.signal }))!) followed.push(line.text);
      })();
      await waitFor(async () => followed.includes(img.STDERR_LINE), "the followed lines");
      abort.abort();
      await reading;
      expect(await runtime.logLines(`cp-conformance-no-such-${run}`)).toBeNull();
    });

    it("the app's variables reach the process and no PORT is set", async () => {
      const instance = await start(tag("web"), { [img.GREETING_VAR]: "hello conformance a=b" });
      const text = await waitForText(`${instance.url}/cgi-bin/env`);
      expect(text).toContain(`${img.GREETING_VAR}=hello conformance a=b`);
      expect(text).toContain("PORT=unset");
    });

    it("a process listening only on 127.0.0.1 inside does not answer at its URL", async () => {
      const instance = await start(tag("loopback"));
      await waitFor(async () => (await runtime.logs(instance.id)).includes(img.STARTED_LINE), "the process to start");
      for (let attempt = 0; attempt < 3; attempt++) expect(await fetchText(instance.url)).toBeNull();
    });

    it("restart keeps the image and answers again", async () => {
      const instance = await start(tag("web"));
      await waitForText(instance.url);
      const restarted = await runtime.restart(instance.id);
      expect(restarted.id).toBe(instance.id);
      expect(await waitForText(restarted.url)).toContain(img.PAGE_TEXT);
      expect((await runtime.inspect(instance.id))?.image).toBe(tag("web"));
    });

    it("stop leaves it not running; stopping again is fine; resume answers again", async () => {
      const instance = await start(tag("web"));
      await runtime.stop(instance.id);
      expect(await runtime.inspect(instance.id)).toMatchObject({ running: false, url: null });
      await runtime.stop(instance.id);
      const resumed = await runtime.resume(instance.id);
      expect(await waitForText(resumed.url)).toContain(img.PAGE_TEXT);
      expect(await runtime.inspect(instance.id)).toMatchObject({ running: true, url: resumed.url });
    });

    it("logs hold the process's stdout and stderr, and tail limits them", async () => {
      const instance = await start(tag("web"));
      await waitFor(async () => (await runtime.logs(instance.id)).includes(img.STDERR_LINE), "both log lines");
      const all = await runtime.logs(instance.id);
      expect(all).toContain(`${img.STARTED_LINE}\n`);
      expect(all).toContain(`${img.STDERR_LINE}\n`);
      const last = await runtime.logs(instance.id, { tail: 1 });
      expect(last.trimEnd().split("\n")).toHaveLength(1);
    });

    it("logLines gives timestamped lines with their stream; tail and since limit them", async (ctx) => {
      if (!runtime.logLines) return ctx.skip();
      const before = Date.now() - 5_000;
      const instance = await start(tag("web"));
      await waitFor(async () => (await runtime.logs(instance.id)).includes(img.STDERR_LINE), "both log lines");
      const lines = await collect(await runtime.logLines(instance.id));
      // The engine reads stdout and stderr apart: their order between the two is not fixed.
      expect(lines.map(({ stream, text }) => ({ stream, text })).sort((a, b) => a.stream.localeCompare(b.stream))).toEqual([
        { stream: "stderr", text: img.STDERR_LINE },
        { stream: "stdout", text: img.STARTED_LINE },
      ]);
      for (const line of lines) expect(line.at).toBeGreaterThan(before);
      for (const line of lines) expect(line.at).toBeLessThanOrEqual(Date.now() + 5_000);
      expect((await collect(await runtime.logLines(instance.id, { tail: 1 }))).map((l) => l.text)).toEqual([lines[1]!.text]);
      expect(await collect(await runtime.logLines(instance.id, { since: Date.now() + 60_000 }))).toEqual([]);
      expect((await collect(await runtime.logLines(instance.id, { since: lines[0]!.at }))).length).toBeGreaterThanOrEqual(1);
      expect(await runtime.logLines("cp-conformance-no-such-instance")).toBeNull();
    });

    it("logLines with follow yields what is there, then ends when the reader aborts or the instance goes", async (ctx) => {
      if (!runtime.logLines) return ctx.skip();
      const instance = await start(tag("web"));
      await waitFor(async () => (await runtime.logs(instance.id)).includes(img.STDERR_LINE), "both log lines");
      const reader = new AbortController();
      const followed = await runtime.logLines(instance.id, { follow: true, signal: reader.signal });
      const seen: string[] = [];
      const ended = (async () => {
        for await (const line of followed!) seen.push(line.text);
      })();
      await waitFor(async () => seen.includes(img.STDERR_LINE), "the followed lines");
      reader.abort();
      await expect(withTimeout(ended, 5_000)).resolves.toBeUndefined();

      const second = await runtime.logLines(instance.id, { follow: true, tail: 0 });
      const gone = (async () => {
        for await (const _ of second!) void _;
      })();
      await runtime.remove(instance.id);
      await expect(withTimeout(gone, 10_000)).resolves.toBeUndefined();
    });

    it("a process that exits at once is reported, and its logs stay readable", async () => {
      const outcome = await build("exiting");
      expect(outcome.ok).toBe(true);
      const s = spec(tag("exiting"));
      instances.push(s.name);
      // Docker may still see it running when start returns; then it must soon be seen stopped.
      const started = await runtime.start(s).catch((error: unknown) => error);
      if (started instanceof Error && !(started instanceof InstanceExitedError)) throw started;
      if (started instanceof InstanceExitedError) expect(started.exitCode).toBe(3);
      const id = started instanceof InstanceExitedError ? started.instanceId : (started as { id: string }).id;
      // The engine restarts it a few times (its restart policy) before it stays exited; an adapter
      // without `state` (the swarm's) is asked whether it runs.
      if (runtime.state) await waitFor(async () => (await runtime.state!(id))?.status === "exited", "the process to stay exited", restartPolicy().giveUpMs);
      else await waitFor(async () => (await runtime.inspect(id))?.running === false, "the process to exit");
      expect(await runtime.inspect(id)).toMatchObject({ running: false, url: null });
      expect(await runtime.logs(id)).toContain(img.EXITING_LINE);
    });

    it("remove makes it disappear; removing again is fine", async () => {
      const instance = await start(tag("web"));
      await runtime.remove(instance.id);
      expect(await runtime.inspect(instance.id)).toBeNull();
      await runtime.remove(instance.id);
      expect(await runtime.inspect("cp-conformance-no-such-instance")).toBeNull();
    });

    it("instances lists this run's instances by label, running or stopped, and nothing once removed", async () => {
      const a = await start(tag("web"));
      const b = await start(tag("web"));
      await runtime.stop(b.id);
      const mine = { "cp-conformance": run };
      expect((await runtime.instances(mine)).sort()).toEqual([a.id, b.id].sort());
      expect(await runtime.instances({ "cp-conformance": `${run}-other` })).toEqual([]);
      await runtime.remove(a.id);
      await runtime.remove(b.id);
      expect(await runtime.instances(mine)).toEqual([]);
    });

    it("images lists every tag of a repository and no other repository's", async () => {
      const repository = `cp-conformance-list-${run}`;
      const tags = [`${repository}:one`, `${repository}:two`];
      images.push(...tags);
      for (const t of tags) {
        const built = await runtime.build({ context: tarStream(img.conformanceContext(busybox), 16 * 1024), dockerfile: img.DOCKERFILES.web, tag: t });
        expect(built.ok).toBe(true);
      }
      expect((await runtime.images(repository)).sort()).toEqual(tags);
      expect(await runtime.images(`${repository}-other`)).toEqual([]);
      for (const t of tags) await runtime.removeImage(t);
      expect(await runtime.images(repository)).toEqual([]);
    });

    engineIt("the engine holds the instance's settings (docker inspect): limits, capabilities, init, log, restart, port, network", async () => {
      const network = `cp-conformance-net-${run}`;
      networks.push(network);
      const s = { ...spec(tag("web")), limits: { memoryBytes: 96 * 1024 * 1024, cpus: 0.25, pids: 64 }, network, hostPort: await freePort() };
      instances.push(s.name);
      const instance = await runtime.start(s);
      expect(new URL(instance.url).port).toBe(String(s.hostPort));
      const c = await engineJson<{ HostConfig: Record<string, unknown> }>(under.engineUrl!, `/containers/${instance.id}/json`);
      expect(c.HostConfig).toMatchObject({
        Memory: 96 * 1024 * 1024,
        MemorySwap: 96 * 1024 * 1024,
        NanoCpus: 250_000_000,
        PidsLimit: 64,
        SecurityOpt: ["no-new-privileges"],
        Init: true,
        LogConfig: { Type: "json-file", Config: { "max-size": "5m", "max-file": "2" } },
        RestartPolicy: { Name: "on-failure", MaximumRetryCount: MAX_RESTARTS },
        PortBindings: { [`${img.PORT}/tcp`]: [{ HostIp: "127.0.0.1", HostPort: String(s.hostPort) }] },
        NetworkMode: network,
      });
      expect([...(c.HostConfig.CapDrop as string[])].sort()).toEqual([...CAP_DROP].sort());
      expect(c.HostConfig.Privileged ?? false).toBe(false);
      expect(c.HostConfig.Binds ?? []).toEqual([]);
      expect(c.HostConfig.Devices ?? []).toEqual([]);
      expect(c.HostConfig.CapAdd ?? null).toBeNull();
      expect(await waitForText(instance.url)).toContain(img.PAGE_TEXT);
    });

    it("state reports a running instance: no restarts, no exit code, not OOM-killed", async (ctx) => {
      if (!runtime.state) return ctx.skip();
      const instance = await start(tag("web"));
      expect(await runtime.state!(instance.id)).toMatchObject({ id: instance.id, status: "running", restarts: 0, exitCode: null, oomKilled: false });
      expect(await runtime.state!("cp-conformance-no-such-instance")).toBeNull();
    });

    it("a process that exits non-zero is restarted by the engine, then reported exited with its code and restarts", async (ctx) => {
      if (!runtime.state) return ctx.skip();
      const { maxRestarts, giveUpMs } = restartPolicy();
      expect((await build("exiting")).ok).toBe(true);
      const s = spec(tag("exiting"));
      instances.push(s.name);
      const started = await runtime.start(s).catch((error: unknown) => error);
      const id = started instanceof InstanceExitedError ? started.instanceId : (started as { id: string }).id;
      await waitFor(async () => (await runtime.state!(id))?.status === "exited", "the engine to stop restarting it", giveUpMs);
      expect(await runtime.state!(id)).toMatchObject({ status: "exited", restarts: maxRestarts, exitCode: 3, oomKilled: false });
      const output = await runtime.logs(id, { tail: 50 });
      expect(output.split(img.EXITING_LINE).length - 1).toBe(maxRestarts + 1);
    });

    it("a process the kernel kills for memory is reported OOM-killed, with exit code 137", async (ctx) => {
      if (!runtime.state || !under.tellsOomKill) return ctx.skip();
      expect((await build("hungry")).ok).toBe(true);
      const s = spec(tag("hungry"));
      instances.push(s.name);
      const started = await runtime.start(s).catch((error: unknown) => error);
      const id = started instanceof InstanceExitedError ? started.instanceId : (started as { id: string }).id;
      // The engine may already run it again (then with no exit code): wait for a reading between runs.
      let state: Awaited<ReturnType<NonNullable<ContainerRuntime["state"]>>> = null;
      await waitFor(async () => (state = await runtime.state!(id))?.exitCode === 137, "the kill to be reported", restartPolicy().giveUpMs);
      expect(state).toMatchObject({ exitCode: 137, oomKilled: true });
      expect(["restarting", "exited"]).toContain(state!.status);
    });

    engineIt("a host port held by another instance is refused with PortTakenError, leaving nothing behind", async () => {
      const hostPort = await freePort();
      const first = await start(tag("web"));
      const a = spec(tag("web"));
      instances.push(a.name);
      const holder = await runtime.start({ ...a, hostPort });
      instances.push(holder.id);
      const b = spec(tag("web"));
      instances.push(b.name);
      const refused = await runtime.start({ ...b, hostPort }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(PortTakenError);
      expect((refused as PortTakenError).hostPort).toBe(hostPort);
      expect(await runtime.inspect(b.name)).toBeNull();
      expect(await waitForText(holder.url)).toContain(img.PAGE_TEXT);
      expect(first.url).not.toBe(holder.url);
    });

    engineIt("ensureNetwork is idempotent; removeNetwork removes it, and again is fine", async () => {
      const network = `cp-conformance-net2-${run}`;
      networks.push(network);
      await runtime.ensureNetwork!(network, { "cp-conformance": run });
      await runtime.ensureNetwork!(network, { "cp-conformance": run });
      expect((await engineStatus(under.engineUrl!, `/networks/${network}`))).toBe(200);
      const s = { ...spec(tag("web")), network };
      instances.push(s.name);
      const instance = await runtime.start(s);
      await runtime.remove(instance.id);
      await runtime.removeNetwork!(network);
      expect((await engineStatus(under.engineUrl!, `/networks/${network}`))).toBe(404);
      await runtime.removeNetwork!(network);
    });

    it("removeImage makes the image disappear; removing again is fine", async () => {
      expect((await build("exiting")).ok).toBe(true);
      await runtime.removeImage(tag("exiting"));
      expect(await runtime.hasImage(tag("exiting"))).toBe(false);
      await runtime.removeImage(tag("exiting"));
    });
  });
}

/** A versioned engine call, outside the adapter: what `docker inspect` shows. */
async function engineJson<T>(base: string, path: string): Promise<T> {
  const version = (await fetch(`${base}/_ping`)).headers.get("Api-Version");
  return (await (await fetch(`${base}/v${version}${path}`)).json()) as T;
}

async function engineStatus(base: string, path: string): Promise<number> {
  const version = (await fetch(`${base}/_ping`)).headers.get("Api-Version");
  const res = await fetch(`${base}/v${version}${path}`);
  await res.body?.cancel();
  return res.status;
}

/** A host port nothing listens on now (the system's pick, released at once). */
async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The body of a 200 reply, or null when nothing answers (connection refused or reset, or not 200). */
async function fetchText(url: string): Promise<string | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    const text = await res.text();
    return res.status === 200 ? text : null;
  } catch {
    return null;
  }
}

/** Polls until the URL answers 200 (an instance takes a moment to listen). */
async function waitForText(url: string): Promise<string> {
  let text: string | null = null;
  await waitFor(async () => (text = await fetchText(url)) !== null, `${url} to answer`);
  return text!;
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function collect<T>(lines: AsyncIterable<T> | null): Promise<T[]> {
  const out: T[] = [];
  if (lines) for await (const line of lines) out.push(line);
  return out;
}

/** Rejects when `work` has not settled within `ms`. */
function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not done within ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
