import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { gzipStream } from "../../src/exports/gzip";

/** Deterministic SQL-like text of `size` bytes. */
function textBytes(size: number): Uint8Array {
  let text = "";
  for (let i = 0; text.length < size; i++) text += `INSERT INTO t VALUES(${i},'row ${(i * 7919) % 1000}',${Math.sin(i)});\n`;
  return new TextEncoder().encode(text.slice(0, size));
}

/** `bytes` as `chunk`-byte pieces, each made only when asked for; `onPull` sees how many so far. */
function piecewise(bytes: Uint8Array, chunk: number, onPull?: (pieces: number) => void): ReadableStream<Uint8Array> {
  let offset = 0;
  let pieces = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.slice(offset, offset + chunk));
        offset += chunk;
        onPull?.(++pieces);
      },
    },
    { highWaterMark: 0 },
  );
}

/** Byte-for-byte equality (toEqual walks a large array element by element, far too slowly). */
function same(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((byte, i) => byte === b[i]);
}

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

describe("gzip stream", () => {
  it.each([
    { size: 0, chunk: 100 },
    { size: 1, chunk: 100 },
    { size: 65_536, chunk: 1000 },
    { size: 3_000_000, chunk: 1_048_576 },
  ])("$size bytes in $chunk-byte pieces: one gzip member that the Web and Node gunzip give back exactly", async ({ size, chunk }) => {
    const input = textBytes(size);
    const gz = await bytesOf(gzipStream(piecewise(input, chunk)));
    expect([...gz.subarray(0, 3)]).toEqual([0x1f, 0x8b, 8]);
    // The runtime's DecompressionStream reads a single member only, so it proves there is one.
    expect(same(await bytesOf(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"))), input)).toBe(true);
    expect(same(new Uint8Array(gunzipSync(gz)), input)).toBe(true);
  });

  it("compresses as well as CompressionStream('gzip') at the same level", async () => {
    const input = textBytes(2_000_000);
    const ours = await bytesOf(gzipStream(piecewise(input, 262_144)));
    const web = await bytesOf(new Blob([input]).stream().pipeThrough(new CompressionStream("gzip")));
    expect(ours.byteLength).toBe(web.byteLength);
  });

  it("hands on output while the input is still being read", async () => {
    let pulled = 0;
    const reader = gzipStream(piecewise(textBytes(8_000_000), 262_144, (n) => (pulled = n))).getReader();
    let out = 0;
    const pulledAtFirstOutput: number[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      if (out === 0) pulledAtFirstOutput.push(pulled);
      out += next.value.byteLength;
    }
    // The first output came after one or two pieces of 31, not after the whole input.
    expect(pulledAtFirstOutput[0]).toBeLessThanOrEqual(2);
    expect(pulled).toBe(31);
    expect(out).toBeGreaterThan(0);
  });

  it("lets the isolate's timers run between pieces, not only once the whole input is compressed", async () => {
    let pulled = 0;
    const output = bytesOf(gzipStream(piecewise(textBytes(4_000_000), 262_144, (n) => (pulled = n))));
    // A timer set now stands for every other request of the isolate waiting for its turn.
    const pulledWhenTimerRan = await new Promise<number>((resolve) => setTimeout(() => resolve(pulled), 0));
    await output;
    expect(pulled).toBe(16);
    expect(pulledWhenTimerRan).toBeLessThanOrEqual(2);
  });

  it("cancelling the output cancels the input", async () => {
    let cancelled: unknown = null;
    const input = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(textBytes(100_000)),
      cancel: (reason) => {
        cancelled = reason;
      },
    });
    const reader = gzipStream(input).getReader();
    await reader.read();
    await reader.cancel("stop");
    expect(cancelled).toBe("stop");
  });

  it("fails when its input fails", async () => {
    const input = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.error(new Error("the dump broke")),
    });
    await expect(bytesOf(gzipStream(input))).rejects.toThrow("the dump broke");
  });

  it("with releaseInput frees each input piece that spans its own buffer once zlib has it, and gives the same bytes", async () => {
    const input = textBytes(300_000);
    const pieces: Uint8Array[] = [];
    const windowed = new Uint8Array(10_000);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const offset = pieces.length * 65_536;
        if (offset >= input.byteLength) {
          // A window into a larger buffer is not the stream's to free.
          controller.enqueue(windowed.subarray(0, 100));
          return controller.close();
        }
        const piece = input.slice(offset, offset + 65_536);
        pieces.push(piece);
        controller.enqueue(piece);
      },
    }, { highWaterMark: 0 });
    const gz = await bytesOf(gzipStream(stream, { releaseInput: true }));
    const expected = new Uint8Array(input.byteLength + 100);
    expected.set(input);
    expect(same(new Uint8Array(gunzipSync(gz)), expected)).toBe(true);
    expect(pieces.map((p) => p.buffer.byteLength)).toEqual(pieces.map(() => 0));
    expect(windowed.buffer.byteLength).toBe(10_000);
  });
});
