/** The runtime conformance suite's part on an instance's output, as text and as timestamped lines. */
import { expect, it } from "vitest";
import * as img from "./images";
import { type Suite, waitFor, collect, withTimeout } from "./conformance-suite";

export function logTests(suite: Suite): void {
  const { tag, run, start } = suite;
  it("logLines gives timestamped lines with their stream, tail limits them, follow yields until aborted", async () => {
    const before = Date.now() - 1000;
    const instance = await start(tag("web"));
    await waitFor(async () => (await suite.runtime.logs(instance.id)).includes(img.STDERR_LINE), "both log lines");
    const all: { at: number; stream: string; text: string }[] = [];
    for await (const line of (await suite.runtime.logLines(instance.id))!) all.push(line);
    expect(all).toEqual(expect.arrayContaining([expect.objectContaining({ stream: "stdout", text: img.STARTED_LINE }), expect.objectContaining({ stream: "stderr", text: img.STDERR_LINE })]));
    for (const line of all) expect(line.at).toBeGreaterThanOrEqual(before);
    const last: unknown[] = [];
    for await (const line of (await suite.runtime.logLines(instance.id, { tail: 1 }))!) last.push(line);
    expect(last).toHaveLength(1);
    // Following: a request to the page makes httpd print nothing, so the stream stays open until aborted.
    const abort = new AbortController();
    const followed: string[] = [];
    const reading = (async () => {
      for await (const line of (await suite.runtime.logLines(instance.id, { follow: true, signal: abort.signal }))!) followed.push(line.text);
    })();
    await waitFor(async () => followed.includes(img.STDERR_LINE), "the followed lines");
    abort.abort();
    await reading;
    expect(await suite.runtime.logLines(`cp-conformance-no-such-${run}`)).toBeNull();
  });

  it("logs hold the process's stdout and stderr, and tail limits them", async () => {
    const instance = await start(tag("web"));
    await waitFor(async () => (await suite.runtime.logs(instance.id)).includes(img.STDERR_LINE), "both log lines");
    const all = await suite.runtime.logs(instance.id);
    expect(all).toContain(`${img.STARTED_LINE}\n`);
    expect(all).toContain(`${img.STDERR_LINE}\n`);
    const last = await suite.runtime.logs(instance.id, { tail: 1 });
    expect(last.trimEnd().split("\n")).toHaveLength(1);
  });

  it("logLines gives timestamped lines with their stream; tail and since limit them", async () => {
    const before = Date.now() - 5_000;
    const instance = await start(tag("web"));
    await waitFor(async () => (await suite.runtime.logs(instance.id)).includes(img.STDERR_LINE), "both log lines");
    const lines = await collect(await suite.runtime.logLines(instance.id));
    // The engine reads stdout and stderr apart: their order between the two is not fixed.
    expect(lines.map(({ stream, text }) => ({ stream, text })).sort((a, b) => a.stream.localeCompare(b.stream))).toEqual([
      { stream: "stderr", text: img.STDERR_LINE },
      { stream: "stdout", text: img.STARTED_LINE },
    ]);
    for (const line of lines) expect(line.at).toBeGreaterThan(before);
    for (const line of lines) expect(line.at).toBeLessThanOrEqual(Date.now() + 5_000);
    expect((await collect(await suite.runtime.logLines(instance.id, { tail: 1 }))).map((l) => l.text)).toEqual([lines[1]!.text]);
    expect(await collect(await suite.runtime.logLines(instance.id, { since: Date.now() + 60_000 }))).toEqual([]);
    expect((await collect(await suite.runtime.logLines(instance.id, { since: lines[0]!.at }))).length).toBeGreaterThanOrEqual(1);
    expect(await suite.runtime.logLines("cp-conformance-no-such-instance")).toBeNull();
  });

  it("logLines with follow yields what is there, then ends when the reader aborts or the instance goes", async () => {
    const instance = await start(tag("web"));
    await waitFor(async () => (await suite.runtime.logs(instance.id)).includes(img.STDERR_LINE), "both log lines");
    const reader = new AbortController();
    const followed = await suite.runtime.logLines(instance.id, { follow: true, signal: reader.signal });
    const seen: string[] = [];
    const ended = (async () => {
      for await (const line of followed!) seen.push(line.text);
    })();
    await waitFor(async () => seen.includes(img.STDERR_LINE), "the followed lines");
    reader.abort();
    await expect(withTimeout(ended, 5_000)).resolves.toBeUndefined();

    const second = await suite.runtime.logLines(instance.id, { follow: true, tail: 0 });
    const gone = (async () => {
      for await (const _ of second!) void _;
    })();
    await suite.runtime.remove(instance.id);
    await expect(withTimeout(gone, 10_000)).resolves.toBeUndefined();
  });
}
