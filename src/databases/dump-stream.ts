/**
 * The reading side of a database dump: a byte stream in the Worker that asks the database object
 * for one piece at a time over RPC (openDump / readDump / closeDump).
 *
 * A ReadableStream handed over RPC is pumped by the runtime as fast as the object can produce it,
 * whatever the reader's pace: with the dump faster than gzip, the whole dump piled up in memory
 * (measured by `npx tsx scripts/bench/profile-memory.ts`). Asking per piece keeps at most
 * `readAhead` pieces in flight, so memory stays flat however large the database is.
 */
import type { DumpPosition } from "./dump";
import type { DumpPiece } from "./dump-cursor";
import type { OpenDumpOptions } from "./managed-database";

/** What the stream needs of the database object (its RPC stub). */
export interface DumpSource {
  openDump(options?: OpenDumpOptions): Promise<string>;
  readDump(id: string): Promise<DumpPiece | null>;
  closeDump(id: string): Promise<void>;
}

/** Pieces asked for ahead of the reader, so the next one is on its way while one is processed. */
export const DUMP_READ_AHEAD = 1;

/** A dump read in part: where it stopped, once the stream has closed. */
export interface DumpStretch {
  /** Where the text handed on so far ends (once some was): null when it is the dump's end. */
  next: DumpPosition | null;
  /** Bytes of SQL handed on. */
  bytes: number;
}

/** How much of a dump to read, and from where. */
export interface DumpStreamOptions {
  open?: OpenDumpOptions;
  /** A dump already opened (e.g. by resumeDump): read it instead of opening one. */
  id?: string;
  /** The stream ends (the dump is closed, its lease kept) once this many bytes have been handed on; default: no limit. */
  stopAfterBytes?: number;
  readAhead?: number;
}

/**
 * The dump of `source` as a stream that reads one piece per pull; cancelling it closes the dump.
 * With `stopAfterBytes`, it ends at the first piece boundary past that many bytes; `stretch`
 * then says where the text handed on ends, for the next reader to start from.
 */
export function dumpStream(source: DumpSource, options: DumpStreamOptions = {}): ReadableStream<Uint8Array> & { stretch: DumpStretch } {
  // Opened by the first pull (the runtime may call pull before a start() promise settles).
  let opened: Promise<string> | undefined = options.id === undefined ? undefined : Promise.resolve(options.id);
  const stretch: DumpStretch = { next: null, bytes: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        opened ??= source.openDump(options.open);
        const piece = await source.readDump(await opened);
        if (piece === null) {
          stretch.next = null;
          controller.close();
          return;
        }
        controller.enqueue(piece.bytes);
        stretch.next = piece.next;
        stretch.bytes += piece.bytes.byteLength;
        // After the last piece the next pull reads the end, which lets the object forget the dump.
        if (piece.next !== null && stretch.bytes >= (options.stopAfterBytes ?? Infinity)) {
          controller.close();
          await source.closeDump(await opened);
        }
      },
      async cancel() {
        if (opened) await source.closeDump(await opened);
      },
    },
    new CountQueuingStrategy({ highWaterMark: options.readAhead ?? DUMP_READ_AHEAD }),
  );
  return Object.assign(stream, { stretch });
}
