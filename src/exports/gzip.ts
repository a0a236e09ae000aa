/**
 * gzip of a byte stream with bounded memory, as one ordinary gzip member.
 *
 * The runtime's CompressionStream hands out its output only once its input has ended: over a
 * whole dump it held the whole archive (and more, while its buffer grew) in memory until the last
 * byte was written (measured with `npx tsx scripts/bench/profile-memory.ts`). Node's zlib, which
 * the runtime provides under `nodejs_compat`, is the same zlib at the same level (identical
 * bytes) but hands on output as it compresses. Each pull compresses input until some output is
 * ready, so at most about one input piece's worth of output waits for the reader.
 */
import { createGzip } from "node:zlib";
import { nextTurn } from "../lib/event-loop";
import { ownsBuffer, release } from "../lib/release";

/** gzip level: zlib's default, the one `gzip` and CompressionStream use. */
export const GZIP_LEVEL = 6;
/** Output piece size. */
const GZIP_CHUNK_BYTES = 64 * 1024;

/**
 * The gzip of `input`, produced as the reader reads. With `releaseInput`, each input piece that
 * spans its own buffer is freed once zlib has taken it in (release.ts): for input nobody else
 * holds, such as the pieces of a dump, fresh from the database object.
 */
export function gzipStream(input: ReadableStream<Uint8Array>, options: { releaseInput?: boolean } = {}): ReadableStream<Uint8Array> {
  const source = input.getReader();
  const gzip = createGzip({ level: GZIP_LEVEL, chunkSize: GZIP_CHUNK_BYTES });
  let produced = false;
  const failed = new Promise<never>((_, reject) => gzip.once("error", reject));
  failed.catch(() => {}); // observed through the awaits below

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        gzip.on("data", (chunk: Uint8Array) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          produced = true;
        });
      },
      async pull(controller) {
        produced = false;
        while (!produced) {
          const { done, value } = await source.read();
          if (done) {
            const ended = new Promise<void>((resolve) => gzip.once("end", resolve));
            gzip.end();
            await Promise.race([ended, failed]);
            controller.close();
            return;
          }
          const written = new Promise<void>((resolve, reject) => gzip.write(value, (err) => (err ? reject(err) : resolve())));
          await Promise.race([written, failed]);
          if (options.releaseInput && ownsBuffer(value)) release(value.buffer);
          // zlib's callbacks come as microtasks: without a turn of the event loop per piece, one
          // export would keep every other request of the isolate waiting until it ended.
          await nextTurn();
        }
      },
      async cancel(reason) {
        gzip.destroy();
        await source.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
