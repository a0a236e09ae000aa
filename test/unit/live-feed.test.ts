import { describe, expect, it } from "vitest";
import { LogIds, formatLogId, parseLogId } from "../../src/logs/cursor";
import { type Entry, LogFeed, RING_LINES, SLOW_LAG_LINES, startPosition, tooSlow } from "../../src/logs/live-feed";
import type { LogLine } from "../../src/runtime/types";

// One engine follow per instance, shared by its viewers (src/logs/live-feed.ts): where a viewer
// starts, when it is too slow, and the feed's fan-out, resume, catch-up, slow-viewer and idle rules.

const entry = (at: number, n: number): Entry => ({ cursor: { at, n }, event: "" });
const line = (at: number, text: string): LogLine => ({ at, stream: "stdout", text });

describe("where a viewer starts (startPosition)", () => {
  // Sequence numbers 5..8; the next line will be 9.
  const ring = [entry(10, 0), entry(10, 1), entry(11, 0), entry(12, 0)];
  it.each([
    ["fresh stream: the last `backlog` lines", ring, false, null, 2, { seq: 7, catchUp: false }],
    ["fresh stream, fewer lines than the backlog: all", ring, false, null, 100, { seq: 5, catchUp: false }],
    ["resume from another instance: the whole ring", ring, false, { at: 99, n: 0, instance: "other" }, 100, { seq: 5, catchUp: false }],
    ["resume inside the ring: right after it", ring, false, { at: 10, n: 1, instance: "tag" }, 100, { seq: 7, catchUp: false }],
    ["resume at the newest line: only new lines", ring, false, { at: 12, n: 0, instance: "tag" }, 100, { seq: 9, catchUp: false }],
    ["resume older than the ring: caught up from the engine", ring, false, { at: 9, n: 3, instance: "tag" }, 100, { seq: 5, catchUp: true }],
    ["resume older than a complete ring: no catch-up", ring, true, { at: 9, n: 3, instance: "tag" }, 100, { seq: 5, catchUp: false }],
    ["empty ring missing the start: caught up", [], false, { at: 9, n: 3, instance: "tag" }, 100, { seq: 5, catchUp: true }],
    ["empty complete ring: only new lines", [], true, { at: 9, n: 3, instance: "tag" }, 100, { seq: 5, catchUp: false }],
  ])("%s", (_name, entries, complete, resume, backlog, start) => {
    expect(startPosition(entries, 5, complete, resume, "tag", backlog)).toEqual(start);
  });
});

describe("a viewer too far behind is closed (tooSlow)", () => {
  it.each([
    ["reading along", 100, 100, 0, 100, false, false],
    ["backlog unread, no new line missed", 0, 1000, 0, 1000, false, false],
    [`${SLOW_LAG_LINES} new lines unread`, 1000, 1000, 500, 1000 + SLOW_LAG_LINES, false, false],
    [`${SLOW_LAG_LINES + 1} new lines unread`, 1000, 1000, 501, 1001 + SLOW_LAG_LINES, false, true],
    ["its next line left the ring", 10, 20, 11, 30, false, true],
    ["catching up from the engine, the ring moved on: still fine", 10, 20, 11, 30, true, false],
  ])("%s", (_name, seq, joined, first, next, catchingUp, slow) => {
    expect(tooSlow(seq, joined, first, next, catchingUp)).toBe(slow);
  });
});

interface Event {
  id: string;
  text: string;
}

/** Reads a viewer's stream until `until` holds or it ends: its events, and all it sent. */
async function read(reader: ReadableStreamDefaultReader<Uint8Array>, until: (events: Event[]) => boolean) {
  const decoder = new TextDecoder();
  const events: Event[] = [];
  let raw = "";
  let pending = "";
  let done = false;
  while (!until(events)) {
    const chunk = await reader.read();
    if (chunk.done) {
      done = true;
      break;
    }
    const text = decoder.decode(chunk.value, { stream: true });
    raw += text;
    pending += text;
    let cut: number;
    while ((cut = pending.indexOf("\n\n")) >= 0) {
      const block = pending.slice(0, cut);
      pending = pending.slice(cut + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (id && data) events.push({ id, text: (JSON.parse(data) as { text: string }).text });
    }
  }
  return { events, raw, done };
}

function feed(options: { catchUp?: LogLine[]; heartbeatMs?: number; secrets?: string[] } = {}) {
  const state = { idle: 0, catchUps: [] as number[] };
  const f = new LogFeed({
    tag: "tag",
    secrets: options.secrets ?? [],
    heartbeatMs: options.heartbeatMs ?? 60_000,
    catchUp: async (since) => {
      state.catchUps.push(since);
      return (async function* () {
        yield* (options.catchUp ?? []).filter((l) => l.at >= since);
      })();
    },
    onIdle: () => state.idle++,
  });
  return { f, state };
}

describe("the shared feed", () => {
  it("sends retry, events with ids and JSON data, env values masked, and a heartbeat while nothing comes", async () => {
    const { f } = feed({ heartbeatMs: 30, secrets: ["secret-value"] });
    f.load([], true);
    const reader = f.subscribe("v1", null).getReader();
    f.append({ at: 5, stream: "stderr", text: 'say "hi" secret-value' });
    const { raw } = await read(reader, (e) => e.length === 1);
    expect(raw).toBe(`retry: 1000\n\nid: 5-0-tag\ndata: ${JSON.stringify({ at: 5, stream: "stderr", text: 'say "hi" ****' })}\n\n`);
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(": keep-alive\n\n");
    await reader.cancel();
  });

  it("gives every viewer the same lines with the same ids; a resume gets only the lines after it", async () => {
    const { f } = feed();
    f.load([line(1, "old")], true);
    const readers = ["a", "b", "c"].map((v) => f.subscribe(v, null).getReader());
    for (let i = 0; i < 5; i++) f.append(line(10 + (i >> 1), `line ${i}`));
    const got = await Promise.all(readers.map((r) => read(r, (e) => e.length === 6)));
    expect(got[0]!.events.map((e) => e.text)).toEqual(["old", "line 0", "line 1", "line 2", "line 3", "line 4"]);
    expect(got[1]!.events).toEqual(got[0]!.events);
    expect(got[2]!.events).toEqual(got[0]!.events);
    expect(got[0]!.events.map((e) => e.id)).toEqual(["1-0-tag", "10-0-tag", "10-1-tag", "11-0-tag", "11-1-tag", "12-0-tag"]);
    const resumed = f.subscribe("d", parseLogId("11-0-tag")).getReader();
    f.append(line(13, "new"));
    expect((await read(resumed, (e) => e.length === 3)).events.map((e) => e.text)).toEqual(["line 3", "line 4", "new"]);
    for (const r of [...readers, resumed]) await r.cancel();
  });

  it("closes a viewer that does not read once it is SLOW_LAG_LINES behind; the others get every line", async () => {
    const { f, state } = feed();
    f.load([], true);
    const reading = f.subscribe("reads", null).getReader();
    const stuck = f.subscribe("stuck", null).getReader();
    const total = SLOW_LAG_LINES + 100;
    const got = read(reading, (e) => e.length === total);
    for (let i = 0; i < total; i++) {
      f.append(line(100 + i, `line ${i}`));
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 0));
    }
    expect((await got).events.map((e) => e.text)).toEqual(Array.from({ length: total }, (_, i) => `line ${i}`));
    expect(f.subscribers).toBe(1);
    // What the stuck viewer had not taken is not kept for it: its stream ends, and it resumes later.
    const rest = await read(stuck, () => false);
    expect(rest.done).toBe(true);
    expect(rest.events.length).toBeLessThan(total);
    expect(state.idle).toBe(0);
    await reading.cancel();
    expect(state.idle).toBe(1);
  });

  it("the ring keeps RING_LINES lines; an older resume is caught up from the engine, then joins the ring without gap or duplicate", async () => {
    const all = Array.from({ length: RING_LINES + 300 }, (_, i) => line(1000 + Math.floor(i / 3), `line ${i}`));
    const { f, state } = feed({ catchUp: all });
    f.load([], true);
    for (const l of all) f.append(l);
    const ids = new LogIds(null, "tag");
    const expected = all.map((l) => ({ id: ids.next(l)!, text: l.text }));
    // Resume after line 100: lines 101.. come, the first from the engine, the rest from the ring.
    const reader = f.subscribe("late", parseLogId(expected[100]!.id)).getReader();
    const got = await read(reader, (e) => e.length === all.length - 101);
    expect(got.events).toEqual(expected.slice(101));
    expect(state.catchUps).toEqual([all[100]!.at]);
    await reader.cancel();
  });

  it("leaves out the first millisecond of a backlog that may be cut, so ids number a millisecond from its first line", async () => {
    const { f } = feed();
    f.load([line(5, "maybe cut"), line(5, "maybe cut too"), line(6, "a"), line(6, "b")], false);
    const { events } = await read(f.subscribe("v", parseLogId("0-0-other")).getReader(), (e) => e.length === 2);
    expect(events).toEqual([
      { id: formatLogId({ at: 6, n: 0 }, "tag"), text: "a" },
      { id: formatLogId({ at: 6, n: 1 }, "tag"), text: "b" },
    ]);
  });

  it("ends every viewer's stream after its last lines when the engine ends the follow; the last viewer leaving makes it idle", async () => {
    const { f, state } = feed();
    f.load([line(1, "one")], true);
    const a = f.subscribe("a", null).getReader();
    const b = f.subscribe("b", null).getReader();
    f.append(line(2, "two"));
    f.end();
    for (const r of [a, b]) {
      const got = await read(r, () => false);
      expect(got.done).toBe(true);
      expect(got.events.map((e) => e.text)).toEqual(["one", "two"]);
    }
    expect(state.idle).toBe(0);

    const { f: g, state: gState } = feed();
    g.load([], true);
    g.subscribe("x", null);
    const y = g.subscribe("y", null).getReader();
    g.leave("x");
    expect(gState.idle).toBe(0);
    await y.cancel();
    expect(gState.idle).toBe(1);
  });
});
