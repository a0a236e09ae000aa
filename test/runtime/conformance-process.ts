/** The runtime conformance suite's part on what the engine reports of an instance's process: exits, restarts, OOM kills, stats; and the report, capacity and disk answers. */
import { expect, it } from "vitest";
import { type ContainerRuntime, InstanceExitedError } from "../../src/runtime/types";
import * as img from "./images";
import { type Suite, waitForText, waitFor } from "./conformance-suite";

export function processTests(suite: Suite): void {
  const { tag, run, build, spec, start, instances, restartPolicy } = suite;
  it("a process that exits at once is reported, and its logs stay readable", async () => {
    const outcome = await build("exiting");
    expect(outcome.ok).toBe(true);
    const s = spec(tag("exiting"));
    instances.push(s.name);
    // Docker may still see it running when start returns; then it must soon be seen stopped.
    const started = await suite.runtime.start(s).catch((error: unknown) => error);
    if (started instanceof Error && !(started instanceof InstanceExitedError)) throw started;
    if (started instanceof InstanceExitedError) expect(started.exitCode).toBe(3);
    const id = started instanceof InstanceExitedError ? started.instanceId : (started as { id: string }).id;
    // The engine restarts it a few times (its restart policy) before it stays exited.
    await waitFor(async () => (await suite.runtime.state(id))?.status === "exited", "the process to stay exited", restartPolicy().giveUpMs);
    expect(await suite.runtime.inspect(id)).toMatchObject({ running: false, url: null });
    expect(await suite.runtime.logs(id)).toContain(img.EXITING_LINE);
  });

  it("state reports a running instance: no restarts, no exit code, not OOM-killed", async () => {
    const instance = await start(tag("web"));
    expect(await suite.runtime.state(instance.id)).toMatchObject({ id: instance.id, status: "running", restarts: 0, exitCode: null, oomKilled: false });
    expect(await suite.runtime.state("cp-conformance-no-such-instance")).toBeNull();
  });

  it("stats reads a running instance's memory and CPU; none for a missing one", async () => {
    const instance = await start(tag("web"));
    await waitForText(instance.url);
    let stats = await suite.runtime.stats(instance.id);
    // The first reading of a just-started container may come before the engine's first sample.
    await waitFor(async () => (stats = await suite.runtime.stats(instance.id))?.memoryBytes !== null && stats?.cpuPercentOfOneCpu !== null, "a full stats reading", 30_000);
    expect(stats).toMatchObject({ memoryBytes: expect.any(Number), cpuPercentOfOneCpu: expect.any(Number), restartCount: 0 });
    expect(stats!.memoryBytes!).toBeGreaterThan(0);
    expect(stats!.memoryBytes!).toBeLessThanOrEqual(64 * 1024 * 1024);
    expect(stats!.cpuPercentOfOneCpu!).toBeGreaterThanOrEqual(0);
    expect(await suite.runtime.stats("cp-conformance-no-such-instance")).toBeNull();
  });

  it("report, capacity and writableBytes answer with their documented shapes", async () => {
    const report = await suite.runtime.report();
    expect(Array.isArray(report) && report.every((line) => typeof line === "string")).toBe(true);
    expect(await suite.runtime.capacity(16 * 1024 * 1024)).toMatchObject({ fits: true });
    const measured = await suite.runtime.writableBytes("cp-conformance");
    for (const m of measured) expect(m).toEqual({ id: expect.any(String), bytes: expect.any(Number) });
  });

  it("a process that exits non-zero is restarted by the engine, then reported exited with its code and restarts", async () => {
    const { maxRestarts, giveUpMs } = restartPolicy();
    expect((await build("exiting")).ok).toBe(true);
    const s = spec(tag("exiting"));
    instances.push(s.name);
    const started = await suite.runtime.start(s).catch((error: unknown) => error);
    const id = started instanceof InstanceExitedError ? started.instanceId : (started as { id: string }).id;
    await waitFor(async () => (await suite.runtime.state(id))?.status === "exited", "the engine to stop restarting it", giveUpMs);
    expect(await suite.runtime.state(id)).toMatchObject({ status: "exited", restarts: maxRestarts, exitCode: 3, oomKilled: false });
    const output = await suite.runtime.logs(id, { tail: 50 });
    expect(output.split(img.EXITING_LINE).length - 1).toBe(maxRestarts + 1);
  });

  it("a process the kernel kills for memory is reported OOM-killed, with exit code 137", async (ctx) => {
    if (!suite.under.tellsOomKill) return ctx.skip();
    expect((await build("hungry")).ok).toBe(true);
    const s = spec(tag("hungry"));
    instances.push(s.name);
    const started = await suite.runtime.start(s).catch((error: unknown) => error);
    const id = started instanceof InstanceExitedError ? started.instanceId : (started as { id: string }).id;
    // The engine may already run it again (then with no exit code): wait for a reading between runs.
    let state: Awaited<ReturnType<ContainerRuntime["state"]>> = null;
    await waitFor(async () => (state = await suite.runtime.state(id))?.exitCode === 137, "the kill to be reported", restartPolicy().giveUpMs);
    expect(state).toMatchObject({ exitCode: 137, oomKilled: true });
    expect(["restarting", "exited"]).toContain(state!.status);
  });
}
