/**
 * The reading side of a database dump: a byte stream in the Worker that asks the database object
 * for one piece at a time over RPC (openDump / readDump / closeDump).
 *
 * A ReadableStream handed over RPC is pumped by the runtime as fast as the object can produce it,
 * whatever the reader's pace: with the dump faster than gzip, the whole dump piled up in memory
 * (measured by `npx tsx scripts/bench/profile-memory.ts`). Asking per piece keeps at most
 * `readAhead` pieces in flight, so memory stays flat however large the database is.
 */

/** What the stream needs of the database object (its RPC stub). */
export interface DumpSource {
  openDump(): Promise<string>;
  readDump(id: string): Promise<Uint8Array | null>;
  closeDump(id: string): Promise<void>;
}

/** Pieces asked for ahead of the reader, so the next one is on its way while one is processed. */
export const DUMP_READ_AHEAD = 1;

/** The dump of `source` as a stream that reads one piece per pull; cancelling it closes the dump. */
export function dumpStream(source: DumpSource, readAhead = DUMP_READ_AHEAD): ReadableStream<Uint8Array> {
  // Opened by the first pull (the runtime may call pull before a start() promise settles).
  let opened: Promise<string> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        opened ??= source.openDump();
        const piece = await source.readDump(await opened);
        if (piece === null) controller.close();
        else controller.enqueue(piece);
      },
      async cancel() {
        if (opened) await source.closeDump(await opened);
      },
    },
    new CountQueuingStrategy({ highWaterMark: readAhead }),
  );
}
