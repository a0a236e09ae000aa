import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { DumpPosition } from "../../src/databases/dump";
import {
  type ArchiveTarget,
  copyStretch,
  freshProgress,
  R2_MIN_PART_BYTES,
  stageStretch,
} from "../../src/exports/archive-upload";
import { FIRST_PART_BUFFER_BYTES, fixedParts } from "../../src/exports/fixed-parts";
import { stagingKey } from "../../src/exports/store";
import { sha256Of } from "./export-helpers";

const MiB = 1024 * 1024;

/** `total` pseudo-random bytes in uneven chunks, then (optionally) an error instead of the end. */
function source(total: number, failAfter = false): { stream: ReadableStream<Uint8Array>; bytes: Uint8Array } {
  const bytes = new Uint8Array(total);
  for (let i = 0; i < total; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(total, i + 65536)));
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= total) {
        if (failAfter) controller.error(new Error("source broke"));
        else controller.close();
        return;
      }
      const size = Math.min(total - offset, 300_000 + (offset % 7) * 1000);
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
  return { stream, bytes };
}

/** A target in the real bucket whose bookkeeping is kept in memory. */
function testTarget(key: string) {
  const owed = new Set<string>();
  const target: ArchiveTarget = {
    bucket: env.ARCHIVES,
    key,
    partBytes: R2_MIN_PART_BYTES,
    metadata: { export_id: "e1" },
    trackUpload: async () => crypto.randomUUID(),
    trackObject: async (object) => {
      owed.add(object);
      return { key: object, trackId: crypto.randomUUID() };
    },
    untrack: async () => {},
    drop: async (objects) => {
      for (const o of objects) {
        await env.ARCHIVES.delete(o.key);
        owed.delete(o.key);
      }
    },
  };
  return { target, owed };
}

const AT: DumpPosition = { table: 0, after: null, offset: 0 };

/** Writes `bytes` as stretches cut at `cuts`, the last one finishing the dump, then copies with `copyBudget` per invocation. */
async function writeInStretches(key: string, bytes: Uint8Array, cuts: number[], copyBudget: number) {
  const { target, owed } = testTarget(key);
  let progress = freshProgress();
  let stretches = 0;
  const ends = [...cuts, bytes.byteLength];
  let from = 0;
  for (const [i, end] of ends.entries()) {
    const last = i === ends.length - 1;
    const stretch = await stageStretch(target, stagingKey(key), progress, chunked(bytes.subarray(from, end)), () => (last ? null : AT));
    stretches++;
    from = end;
    if ("archive" in stretch) return { archive: stretch.archive, stretches, owed };
    if (stretch.spent) await target.drop([stretch.spent]);
    progress = stretch.progress;
  }
  for (;;) {
    const copied = await copyStretch(target, stagingKey(key), progress, copyBudget);
    stretches++;
    if ("archive" in copied) return { archive: copied.archive, stretches, owed };
    progress = copied.progress;
  }
}

/** `bytes` as a stream of uneven chunks. */
function chunked(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      const size = Math.min(bytes.byteLength - offset, 300_000 + (offset % 7) * 1000);
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

describe("fixedParts", () => {
  it("cuts a stream into equal parts whatever the chunking, the last one shorter", async () => {
    const chunks = [3, 1, 7, 2, 9].map((n, i) => new Uint8Array(n).fill(i));
    const seen: number[] = [];
    const parts: Uint8Array[] = [];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        chunks.forEach((c) => controller.enqueue(c));
        controller.close();
      },
    });
    for await (const part of fixedParts(stream, 5, async (c) => void seen.push(c.byteLength))) parts.push(part.slice());
    expect(parts.map((p) => p.byteLength)).toEqual([5, 5, 5, 5, 2]);
    expect(parts.map((p) => Array.from(p).join(""))).toEqual(["00012", "22222", "23344", "44444", "44"]);
    expect(seen).toEqual([3, 1, 7, 2, 9]);
  });

  it("fills one buffer again for every full part: a part is intact until the next one is asked for", async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 3; i++) controller.enqueue(new Uint8Array(4).fill(i));
        controller.enqueue(new Uint8Array(2).fill(3));
        controller.close();
      },
    });
    const parts = fixedParts(stream, 4);
    const first = (await parts.next()).value!;
    expect(Array.from(first)).toEqual([0, 0, 0, 0]);
    const second = (await parts.next()).value!;
    expect(second.buffer).toBe(first.buffer);
    expect(Array.from(second)).toEqual([1, 1, 1, 1]);
    expect(Array.from((await parts.next()).value!)).toEqual([2, 2, 2, 2]);
    // The last, shorter part is a copy of its own.
    const last = (await parts.next()).value!;
    expect(last.buffer).not.toBe(first.buffer);
    expect(Array.from(last)).toEqual([3, 3]);
    // The part buffer is freed once the last part is cut, not left to the garbage collector.
    expect(first.buffer.byteLength).toBe(0);
    expect((await parts.next()).done).toBe(true);
  });
});

describe("fixedParts, its buffer growing from FIRST_PART_BUFFER_BYTES", () => {
  it("cuts any stream into the same parts as one buffer of the part size would", async () => {
    const partSize = fc.integer({ min: 1000, max: 4 * FIRST_PART_BUFFER_BYTES + 7 });
    const chunkSizes = fc.array(fc.integer({ min: 0, max: 2 * FIRST_PART_BUFFER_BYTES }), { maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(partSize, chunkSizes, async (partBytes, sizes) => {
        const whole = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
        for (let i = 0; i < whole.byteLength; i++) whole[i] = (i * 31 + (i >> 8)) & 0xff;
        let at = 0;
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            for (const n of sizes) controller.enqueue(whole.slice(at, (at += n)));
            controller.close();
          },
        });
        const lengths: number[] = [];
        const joined = new Uint8Array(whole.byteLength);
        let filled = 0;
        for await (const part of fixedParts(stream, partBytes)) {
          joined.set(part, filled);
          filled += part.byteLength;
          lengths.push(part.byteLength);
        }
        const expected: number[] = [];
        for (let i = 0; i < whole.byteLength; i += partBytes) expected.push(Math.min(partBytes, whole.byteLength - i));
        expect(lengths).toEqual(expected);
        expect(joined.every((byte, i) => byte === whole[i])).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it("yields full parts of exactly the part size once the buffer has grown to it", async () => {
    const partBytes = 3 * FIRST_PART_BUFFER_BYTES + 5;
    const { stream, bytes } = source(2 * partBytes + 10);
    const lengths: number[] = [];
    const buffers: number[] = [];
    const joined = new Uint8Array(bytes.byteLength);
    for await (const part of fixedParts(stream, partBytes)) {
      joined.set(part, lengths.reduce((a, b) => a + b, 0));
      lengths.push(part.byteLength);
      buffers.push(part.buffer.byteLength);
    }
    expect(lengths).toEqual([partBytes, partBytes, 10]);
    expect(buffers.slice(0, 2)).toEqual([partBytes, partBytes]);
    expect(joined).toEqual(bytes);
  });
});

describe("fixedParts with release", () => {
  it("frees each source buffer once every piece of it is copied, pieces that share a buffer included", async () => {
    // Two buffers handed out in slices, as zlib does with its output, then one piece of its own.
    const first = new Uint8Array([1, 2, 3, 4, 5, 6]);
    const second = new Uint8Array([7, 8, 9, 10]);
    const own = new Uint8Array([11, 12, 13]);
    const pieces = [first.subarray(0, 2), first.subarray(2, 6), second.subarray(0, 1), second.subarray(1, 4), own];
    const detachedWhenSeen: boolean[] = [];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        pieces.forEach((p) => controller.enqueue(p));
        controller.close();
      },
    });
    const parts: number[][] = [];
    for await (const part of fixedParts(stream, 5, async () => void detachedWhenSeen.push(first.buffer.byteLength === 0), { release: true })) parts.push(Array.from(part));
    expect(parts).toEqual([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13]]);
    // The first buffer stays whole while its slices are read, and is freed once the next buffer's piece comes.
    expect(detachedWhenSeen).toEqual([false, false, true, true, true]);
    expect([first.buffer.byteLength, second.buffer.byteLength, own.buffer.byteLength]).toEqual([0, 0, 0]);
  });

  it("leaves the pieces alone without it", async () => {
    const piece = new Uint8Array([1, 2, 3]);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(piece);
        controller.close();
      },
    });
    for await (const _ of fixedParts(stream, 5)) void _;
    expect(Array.from(piece)).toEqual([1, 2, 3]);
  });
});

describe("stageStretch and copyStretch", () => {
  it("put a small archive in one go with its hash and size", async () => {
    const key = `test/${crypto.randomUUID()}.gz`;
    const { bytes } = source(1000);
    const { archive, stretches } = await writeInStretches(key, bytes, [], R2_MIN_PART_BYTES);
    const object = await env.ARCHIVES.get(key);
    expect({ archive, stretches }).toEqual({ archive: { size: 1000, sha256: await sha256Of(bytes) }, stretches: 1 });
    expect(new Uint8Array(await object!.arrayBuffer())).toEqual(bytes);
    expect(object!.customMetadata).toEqual({ export_id: "e1", sha256: archive.sha256, size: "1000" });
  });

  it("write an archive over several invocations in equal parts, carrying what is left over, and copy it under its key with the metadata", async () => {
    const key = `test/${crypto.randomUUID()}.gz`;
    const total = 2 * R2_MIN_PART_BYTES + 12345;
    const { bytes } = source(total);
    // Stretches shorter than a part (carried whole), across a part boundary, and exactly on one.
    const cuts = [3 * MiB, 4 * MiB, 7 * MiB, R2_MIN_PART_BYTES * 2];
    const { archive, stretches, owed } = await writeInStretches(key, bytes, cuts, 1);
    expect(stretches).toBe(cuts.length + 1 + 3);
    const object = await env.ARCHIVES.get(key);
    expect(archive).toEqual({ size: total, sha256: await sha256Of(bytes) });
    expect(await sha256Of(await object!.arrayBuffer())).toBe(archive.sha256);
    expect(object!.customMetadata).toEqual({ export_id: "e1", sha256: archive.sha256, size: String(total) });
    expect(object!.etag).toMatch(/-3$/);
    expect((await env.ARCHIVES.list({ prefix: stagingKey(key) })).objects).toEqual([]);
    expect(owed.size).toBe(0);
  }, 60_000);

  it("leave the checkpoint they started from usable when the source breaks midway", async () => {
    const key = `test/${crypto.randomUUID()}.gz`;
    const { target } = testTarget(key);
    const { bytes } = source(3 * MiB + 5);
    const first = await stageStretch(target, stagingKey(key), freshProgress(), chunked(bytes.subarray(0, 3 * MiB)), () => AT);
    if ("archive" in first) throw new Error("not done yet");
    const { stream } = source(2 * R2_MIN_PART_BYTES, true);
    await expect(stageStretch(target, stagingKey(key), first.progress, stream, () => AT)).rejects.toThrow("source broke");
    const again = await stageStretch(target, stagingKey(key), first.progress, chunked(bytes.subarray(3 * MiB)), () => null);
    expect("archive" in again && again.archive).toEqual({ size: bytes.byteLength, sha256: await sha256Of(bytes) });
    expect(await sha256Of(await (await env.ARCHIVES.get(key))!.arrayBuffer())).toBe(await sha256Of(bytes));
  }, 60_000);

  it("find the copy complete when a try died after completing it, before the export was recorded", async () => {
    const key = `test/${crypto.randomUUID()}.gz`;
    const { target } = testTarget(key);
    const { bytes } = source(2 * R2_MIN_PART_BYTES + 10);
    const staged = await stageStretch(target, stagingKey(key), freshProgress(), chunked(bytes), () => null);
    if ("archive" in staged) throw new Error("expected a staged archive");
    const checkpoint = await copyStretch(target, stagingKey(key), staged.progress, 1);
    if ("archive" in checkpoint) throw new Error("expected a copy checkpoint");
    // The try that went on from the checkpoint completed the copy and died.
    expect("archive" in (await copyStretch(target, stagingKey(key), checkpoint.progress, Infinity))).toBe(true);
    const again = await copyStretch(target, stagingKey(key), checkpoint.progress, Infinity);
    expect("archive" in again && again.archive).toEqual({ size: bytes.byteLength, sha256: await sha256Of(bytes) });
  }, 60_000);

  it("refuse parts smaller than R2 accepts", async () => {
    const { target } = testTarget("test/x");
    await expect(stageStretch({ ...target, partBytes: 1024 }, "test/x.staging", freshProgress(), source(10).stream, () => null)).rejects.toThrow(RangeError);
  });
});
