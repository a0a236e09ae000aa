/**
 * Byte streams cut for a multipart upload: parts of one fixed size, from a stream that may start
 * with bytes carried over from an earlier invocation.
 */
import { release } from "../lib/release";

/** `head`, then the bytes of `rest`. */
export function prepend(head: Uint8Array, rest: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  if (head.byteLength === 0) return rest;
  const reader = rest.getReader();
  let first = true;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (first) {
          first = false;
          controller.enqueue(head);
          return;
        }
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** The first part's buffer starts this small and doubles as bytes come, up to the part size. */
export const FIRST_PART_BUFFER_BYTES = 64 * 1024;

/**
 * Cuts a byte stream into parts of exactly `partBytes` (the last may be shorter), passing every
 * chunk to `onChunk` first. Every full part is the same buffer, filled again, so a large archive
 * leaves no trail of part-sized garbage behind it: a yielded part stays intact until the next
 * part is asked for (the caller uploads it, awaited, before asking), and the buffer is freed once
 * the stream ends. The last, shorter part is a copy of its own. The buffer starts at FIRST_PART_BUFFER_BYTES and grows to the part size only
 * as the archive does: an archive of a few hundred bytes (an empty database's) costs no 10 MiB
 * allocation, which zeroing alone made a tenth of a start's work under load.
 *
 * With `release`, the stream's pieces are freed once copied (release.ts), for pieces nobody else
 * holds. Pieces may share a buffer (zlib hands out slices of one output buffer until it is full,
 * then takes a new one), so a buffer is freed when a piece from another buffer comes, and the
 * last one at the end: by then every piece of it has been copied.
 */
export async function* fixedParts(
  bytes: ReadableStream<Uint8Array>,
  partBytes: number,
  onChunk: (chunk: Uint8Array) => Promise<void> = async () => {},
  options: { release?: boolean } = {},
): AsyncGenerator<Uint8Array<ArrayBuffer>, void, undefined> {
  let part: Uint8Array<ArrayBuffer> | undefined;
  let filled = 0;
  let copied: ArrayBufferLike | undefined;
  for await (const chunk of bytes) {
    if (options.release && copied !== undefined && chunk.buffer !== copied) release(copied);
    copied = chunk.buffer;
    await onChunk(chunk);
    let offset = 0;
    while (offset < chunk.byteLength) {
      part ??= new Uint8Array(Math.min(partBytes, FIRST_PART_BUFFER_BYTES));
      if (filled === part.byteLength) part = grown(part, Math.min(partBytes, part.byteLength * 2));
      const take = Math.min(part.byteLength - filled, chunk.byteLength - offset);
      part.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === partBytes) {
        yield part;
        filled = 0;
      }
    }
  }
  if (options.release && copied !== undefined) release(copied);
  if (part === undefined) return;
  // The part buffer (up to 10 MiB) is freed at once rather than left to the next collection: the
  // last full part was uploaded before this one was asked for, and the last short one is a copy.
  const last = filled > 0 ? part.slice(0, filled) : undefined;
  release(part.buffer);
  if (last) yield last;
}

/** `part`'s bytes in a buffer of `bytes`; the old buffer is handed back at once (release.ts). */
function grown(part: Uint8Array<ArrayBuffer>, bytes: number): Uint8Array<ArrayBuffer> {
  const larger = new Uint8Array(bytes);
  larger.set(part);
  release(part.buffer);
  return larger;
}
