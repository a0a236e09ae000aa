import { release } from "../lib/release";
import { type DumpPosition, type DumpText, dumpSql } from "./dump";
import { joinBytes } from "./dump-reads";

/**
 * One read of an open dump returns about this many bytes of SQL (one row may exceed it). The
 * database's SQL calls run between reads, so a read is kept short: it is as long as a call may
 * have to wait during an export. The export's gzip takes a turn of the event loop after each read
 * (gzip.ts), a timer, which costs about 1.4 ms here under `wrangler dev`: 128 KiB reads spent about
 * a tenth of a 50 MB export's time in those waits (`npm run bench -- --no-requests --sizes 50MB`:
 * 0.88 of the native pipeline with 128 KiB, 0.97 with 256 KiB; the start request during the
 * export answered in 47 and 59 ms, SQL calls within 261 and 231 ms at p99).
 */
export const DUMP_READ_BYTES = 256 * 1024;

/** Why a dump ended: read to the end, failed reading, closed by its reader, or left unread. */
export type DumpEnd = "end" | "error" | "closed" | "idle";

/** How a DumpCursor reports its end and guards against a reader that went away. */
export interface DumpCursorOptions {
  /** Runs once, when the dump has been read to its end, fails, is closed or goes idle. */
  onDone?: (why: DumpEnd) => void;
  /** The dump fails when nobody reads it for this long. */
  idleTimeoutMs?: number;
  /** Where to start: a position an earlier piece ended at (default: the start). */
  from?: DumpPosition;
}

/** One read of a dump: about DUMP_READ_BYTES of SQL as UTF-8, and where the dump stands after it (null: the end). */
export interface DumpPiece {
  bytes: Uint8Array;
  next: DumpPosition | null;
}

/**
 * An open dump, read one bounded piece per call: nothing is produced until the reader asks, so a
 * slow reader (gzip, an upload) never makes the database object buffer the dump. The object hands
 * out these pieces over RPC one call at a time; see dump-stream.ts for the reading side.
 */
export class DumpCursor {
  readonly #pieces: Generator<DumpText, void, undefined>;
  readonly #options: DumpCursorOptions;
  /** The last piece handed out: the reader has it by the time it asks again (see read). */
  #handedOut: Uint8Array | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;
  #failure: Error | undefined;

  constructor(sql: SqlStorage, options: DumpCursorOptions = {}) {
    this.#pieces = dumpSql(sql, options.from);
    this.#options = options;
    this.#arm();
  }

  /** The next piece, about DUMP_READ_BYTES long; null once the dump has all been read. */
  read(): DumpPiece | null {
    // The reader asks for one piece at a time (dump-stream.ts), so the last one has been sent over
    // RPC, copied, by now: its buffer is freed here rather than at some later collection.
    this.#releaseHandedOut();
    if (this.#failure) throw this.#failure;
    if (this.#ended) return null;
    const parts: Uint8Array<ArrayBuffer>[] = [];
    let size = 0;
    let next: DumpPosition | null = null;
    try {
      while (size < DUMP_READ_BYTES) {
        const piece = this.#pieces.next();
        if (piece.done) {
          this.#finish("end");
          break;
        }
        parts.push(piece.value.bytes);
        size += piece.value.bytes.byteLength;
        next = piece.value.next;
      }
    } catch (err) {
      this.#finish("error");
      throw err;
    }
    if (!this.#ended) this.#arm();
    if (parts.length === 0 && this.#ended) return null;
    this.#handedOut = joinBytes(parts, size);
    return { bytes: this.#handedOut, next };
  }

  #releaseHandedOut(): void {
    if (this.#handedOut) release(this.#handedOut.buffer);
    this.#handedOut = undefined;
  }

  /** Ends the dump early (the reader cancelled); safe to call more than once. */
  close(): void {
    if (this.#finish("closed")) {
      this.#pieces.return();
      this.#failure = new Error("The dump was closed.");
    }
  }

  #arm(): void {
    const { idleTimeoutMs } = this.#options;
    if (idleTimeoutMs === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      if (this.#finish("idle")) {
        this.#pieces.return();
        this.#failure = new Error(`The dump reader was idle for ${idleTimeoutMs} ms.`);
      }
    }, idleTimeoutMs);
  }

  #finish(why: DumpEnd): boolean {
    clearTimeout(this.#timer);
    if (this.#ended) return false;
    this.#ended = true;
    this.#options.onDone?.(why);
    return true;
  }
}
