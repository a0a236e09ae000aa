import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CHUNK_LINES, type ChunkRef, KEPT_LINES, chunksToDrop, chunksToRead, flushTarget, shouldFlush } from "../../src/logs/chunks";
import { LogIds, formatLogId, parseLogId } from "../../src/logs/cursor";
import { MASK, MIN_MASKED_LENGTH, maskLine, maskText, secretsToMask } from "../../src/logs/mask";
import { LogQuery, pickLines, toSearch } from "../../src/logs/query";
import type { LogLine } from "../../src/runtime/types";

// Live logs: "Nothing secret" (masking), "The last 10,000 lines per app" (chunks, search) and the
// stream's resume rule (Last-Event-ID without gaps or duplicates).

describe("masking env values (a line with an env value is stored with the value as ****)", () => {
  const secrets = secretsToMask(["hunter2-password", "ab", "x", "12345", "-----BEGIN KEY-----\nMIIBOgIBAAJBAK\n-----END KEY-----", "hunter2"]);
  it.each([
    ["password=hunter2-password ok", `password=${MASK} ok`],
    ["hunter2 alone", `${MASK} alone`],
    ["twice hunter2-password hunter2-password", `twice ${MASK} ${MASK}`],
    // Shorter than MIN_MASKED_LENGTH: ordinary text, not masked.
    ["x ab 12345 abc", "x ab 12345 abc"],
    // A PEM value is masked line by line.
    ["key line MIIBOgIBAAJBAK here", `key line ${MASK} here`],
    ["-----BEGIN KEY-----", MASK],
    // A line cut at its limit in the middle of a value loses the value's start too.
    ["prefix hunter2-pass [line cut]", `prefix ${MASK} [line cut]`],
    ["nothing to hide", "nothing to hide"],
  ])("%j -> %j", (line, expected) => {
    expect(maskLine(line, secrets)).toBe(expected);
  });

  it("keeps values of MIN_MASKED_LENGTH or more, longest first, once each", () => {
    expect(MIN_MASKED_LENGTH).toBe(6);
    expect(secretsToMask(["abcdef", "abcdefgh", "abcdef", "abcde"])).toEqual(["abcdefgh", "abcdef"]);
  });

  it("masks each line of a text", () => {
    expect(maskText("a hunter2\nb hunter2-password\n", secrets)).toBe(`a ${MASK}\nb ${MASK}\n`);
  });
});

describe("event ids and resume (Last-Event-ID)", () => {
  const lines = [1000, 1000, 1001, 1001, 1001, 999, 1002].map((at) => ({ at }));

  it("numbers lines of the same millisecond and never goes back in time", () => {
    const ids = new LogIds(null, "abc123");
    expect(lines.map((l) => ids.next(l))).toEqual(["1000-0-abc123", "1000-1-abc123", "1001-0-abc123", "1001-1-abc123", "1001-2-abc123", "1001-3-abc123", "1002-0-abc123"]);
  });

  it.each([
    ["1000-1", ["1001-0", "1001-1", "1001-2", "1001-3", "1002-0"]],
    ["1001-2", ["1001-3", "1002-0"]],
    ["999-5", ["1000-0", "1000-1", "1001-0", "1001-1", "1001-2", "1001-3", "1002-0"]],
  ])("after %s the client gets exactly the lines it misses", (last, expected) => {
    const ids = new LogIds(parseLogId(last));
    expect(lines.map((l) => ids.next(l)).filter((id) => id !== null)).toEqual(expected);
  });

  it.each([
    ["1000-1-abc", { at: 1000, n: 1, instance: "abc" }],
    ["1000-1", { at: 1000, n: 1, instance: "" }],
    ["junk", null],
    ["1000", null],
    ["-1-1", null],
    ["", null],
    [null, null],
  ])("parseLogId(%j)", (value, expected) => {
    expect(parseLogId(value)).toEqual(expected);
  });

  it("formats what it parses", () => {
    expect(formatLogId({ at: 5, n: 2 }, "i")).toBe("5-2-i");
  });
});

describe("search parameters (400 names the field)", () => {
  it.each([
    [{}, { limit: 200 }],
    [{ since: "1000", until: "2000", q: " err ", limit: "5" }, { since: 1000, until: 2000, q: "err", limit: 5 }],
    [{ since: "2026-11-24T00:00:00Z" }, { since: Date.parse("2026-11-24T00:00:00Z"), limit: 200 }],
    [{ q: "   " }, { limit: 200 }],
  ])("%j is %j", (query, expected) => {
    const parsed = LogQuery.safeParse(query);
    expect(parsed.success).toBe(true);
    const search = toSearch(parsed.data!);
    expect(Object.fromEntries(Object.entries(search).filter(([, v]) => v !== undefined))).toEqual(expected);
  });

  it.each([
    [{ limit: "0" }, "limit"],
    [{ limit: "-1" }, "limit"],
    [{ limit: "1.5" }, "limit"],
    [{ since: "soon" }, "since"],
    [{ since: "" }, "since"],
    [{ until: "2026-13-45" }, "until"],
    [{ since: "10", until: "9" }, "until"],
  ])("%j is refused at %s", (query, field) => {
    const parsed = LogQuery.safeParse(query);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.path).toEqual([field]);
  });

  it("picks the last `limit` matches, oldest first, inclusive time window", () => {
    const lines: LogLine[] = [1, 2, 3, 4, 5].map((at) => ({ at, stream: "stdout", text: at % 2 ? "odd Error" : "even" }));
    expect(pickLines(lines, { limit: 2 }).map((l) => l.at)).toEqual([4, 5]);
    expect(pickLines(lines, { limit: 10, q: "error" }).map((l) => l.at)).toEqual([1, 3, 5]);
    expect(pickLines(lines, { limit: 10, since: 2, until: 4 }).map((l) => l.at)).toEqual([2, 3, 4]);
  });
});

describe("chunks (the last 10,000 lines in R2)", () => {
  const chunk = (i: number, count = CHUNK_LINES, bytes = 1000): ChunkRef => ({ key: `k${i}`, first: i * 10, last: i * 10 + 9, count, bytes });

  it.each([
    [{ count: 0, bytes: 0, since: null }, 0, false],
    [{ count: 1, bytes: 10, since: 0 }, 1_000, false],
    [{ count: 1, bytes: 10, since: 0 }, 30_000, true],
    [{ count: CHUNK_LINES, bytes: 10, since: 0 }, 0, true],
    [{ count: 3, bytes: 300_000, since: 0 }, 0, true],
  ])("shouldFlush(%j, %i) = %s", (pending, now, expected) => {
    expect(shouldFlush(pending, now, 30_000)).toBe(expected);
  });

  it("merges a flush into a small newest chunk, else starts a new one", () => {
    expect(flushTarget([], 10, 100)).toBe("new");
    expect(flushTarget([chunk(1, 10)], 10, 100)).toBe("merge");
    expect(flushTarget([chunk(1, CHUNK_LINES - 5)], 10, 100)).toBe("new");
    expect(flushTarget([chunk(1, 10, 256 * 1024 - 10)], 1, 100)).toBe("new");
  });

  it("drops the oldest chunks only while the rest hold KEPT_LINES", () => {
    const full = Array.from({ length: KEPT_LINES / CHUNK_LINES }, (_, i) => chunk(i));
    expect(chunksToDrop(full, 0)).toBe(0);
    expect(chunksToDrop([...full, chunk(99, 1)], 0)).toBe(0);
    expect(chunksToDrop([...full, chunk(99, CHUNK_LINES)], 0)).toBe(1);
    expect(chunksToDrop([...full, chunk(98), chunk(99)], 0)).toBe(2);
  });

  it("reads only the chunks overlapping the window, newest first", () => {
    const chunks = [chunk(1), chunk(2), chunk(3)];
    expect(chunksToRead(chunks, undefined, undefined).map((c) => c.key)).toEqual(["k3", "k2", "k1"]);
    expect(chunksToRead(chunks, 25, undefined).map((c) => c.key)).toEqual(["k3", "k2"]);
    expect(chunksToRead(chunks, 15, 21).map((c) => c.key)).toEqual(["k2", "k1"]);
    expect(chunksToRead(chunks, 40, 50)).toEqual([]);
  });
});

describe("properties (fast-check)", () => {
  it("resuming after any line of any stream gives exactly the lines after it, once each", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 40 }), fc.nat(), (raw, pick) => {
        const lines = [...raw].sort((a, b) => a - b).map((at) => ({ at }));
        const full = new LogIds(null, "i");
        const ids = lines.map((l) => full.next(l)!);
        const k = pick % ids.length;
        const cursor = parseLogId(ids[k]!)!;
        // The engine answers `since` with every line at or after that moment.
        const resumed = new LogIds(cursor, "i");
        const again = lines.filter((l) => l.at >= cursor.at).map((l) => resumed.next(l)).filter((id) => id !== null);
        expect(again).toEqual(ids.slice(k + 1));
      }),
    );
  });

  it("a masked line never holds a whole env value", () => {
    const word = fc.stringMatching(/^[a-z0-9]{1,12}$/);
    fc.assert(
      fc.property(fc.array(word, { maxLength: 5 }), fc.array(fc.oneof(word, fc.constantFrom(" ", "=", ":")), { maxLength: 20 }), (values, parts) => {
        const secrets = secretsToMask(values);
        const text = parts.join("") + values.join(" ");
        const masked = maskLine(text, secrets);
        for (const secret of secrets) expect(masked.includes(secret)).toBe(false);
      }),
    );
  });
});
