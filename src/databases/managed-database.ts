import { DurableObject } from "cloudflare:workers";
import { DumpCursor } from "./dump";
import { WriteHold } from "./write-hold";
import { splitStatements } from "./split-sql";
import { fromBase64, toBase64 } from "../lib/encoding";

/** A value in or out of the SQL console: BLOBs travel as `{ blob: "<base64>" }`. */
export type SqlValue = string | number | boolean | null | { blob: string };
export type SqlOutValue = string | number | null | { blob: string };

export interface StatementResult {
  columns: string[];
  rows: SqlOutValue[][];
  rows_written: number;
  /** True when the statement returned more rows than one reply may hold. */
  truncated?: boolean;
}

export type ExecuteOutcome =
  | { ok: true; results: StatementResult[] }
  | { ok: false; error: string; statement: number };

/**
 * A dump whose reader asks for nothing for this long is abandoned, so a reader that died cannot
 * keep the database's SQL calls waiting. Longer than one archive part takes to upload.
 */
export const DUMP_IDLE_TIMEOUT_MS = 120_000;

/** At most this many rows of one statement go back to the console. */
export const MAX_RESULT_ROWS = 1000;
/** And at most about this many bytes of values in all, so a reply stays small. */
export const MAX_RESULT_BYTES = 1_000_000;

function toBinding(value: SqlValue): SqlStorageValue {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value !== null && typeof value === "object") return fromBase64(value.blob).buffer;
  return value;
}

function toOut(value: SqlStorageValue): SqlOutValue {
  if (value instanceof ArrayBuffer) return { blob: toBase64(value) };
  return value as string | number | null;
}

function sizeOf(value: SqlOutValue): number {
  if (value === null) return 4;
  if (typeof value === "object") return value.blob.length;
  return typeof value === "string" ? value.length : 8;
}

/**
 * One customer database: its data lives in this object's own SQLite storage. The worker reaches
 * it over RPC to run SQL from the console and to stream a dump for exports.
 */
export class ManagedDatabase extends DurableObject<Env> {
  readonly #hold = new WriteHold();
  /** Open dumps by id: each holds SQL calls until it is read to the end, closed or left idle. */
  readonly #dumps = new Map<string, DumpCursor>();

  /**
   * Runs one or more statements as one transaction: all of them apply or none does.
   * Parameters bind to a single statement only. While a dump is being read the call waits,
   * so the dump is one consistent snapshot.
   */
  async execute(sql: string, params: SqlValue[] = []): Promise<ExecuteOutcome> {
    await this.#hold.wait();
    return this.#run(sql, params);
  }

  /**
   * Opens a dump of the whole database as SQL text (see dump.ts); returns its id for readDump.
   * SQL calls wait until the dump has been read to the end, closed, or left unread for
   * DUMP_IDLE_TIMEOUT_MS, so the dump is one consistent snapshot.
   */
  openDump(): string {
    const id = crypto.randomUUID();
    const release = this.#hold.acquire();
    const cursor = new DumpCursor(this.ctx.storage.sql, {
      idleTimeoutMs: DUMP_IDLE_TIMEOUT_MS,
      onDone: (why) => {
        release();
        // A dump read to its end stays until its reader has been told so (readDump answers null).
        if (why !== "end") this.#dumps.delete(id);
      },
    });
    this.#dumps.set(id, cursor);
    return id;
  }

  /**
   * The next piece of an open dump (about 1 MiB of SQL), or null once it has all been read. Each
   * piece is produced only when asked for, so the reader sets the pace and nothing piles up.
   */
  readDump(id: string): Uint8Array | null {
    const cursor = this.#dumps.get(id);
    if (!cursor) throw new Error("This dump is no longer open: it was closed, failed, or left unread for too long.");
    const piece = cursor.read();
    if (piece === null) this.#dumps.delete(id);
    return piece;
  }

  /** Closes an open dump early (its reader cancelled); SQL calls go on. */
  closeDump(id: string): void {
    this.#dumps.get(id)?.close();
    this.#dumps.delete(id);
  }

  #run(sql: string, params: SqlValue[]): ExecuteOutcome {
    const statements = splitStatements(sql);
    if (statements.length === 0) return { ok: false, error: "There is no SQL statement to run.", statement: 0 };
    if (params.length > 0 && statements.length > 1) {
      return { ok: false, error: "Parameters can only be bound when the SQL holds a single statement.", statement: 0 };
    }
    const results: StatementResult[] = [];
    let current = 0;
    try {
      this.ctx.storage.transactionSync(() => {
        let budget = MAX_RESULT_BYTES;
        for (const [index, statement] of statements.entries()) {
          current = index;
          const cursor = this.ctx.storage.sql.exec(statement, ...params.map(toBinding));
          const rows: SqlOutValue[][] = [];
          let truncated = false;
          for (const raw of cursor.raw()) {
            if (rows.length >= MAX_RESULT_ROWS || budget <= 0) {
              truncated = true;
              continue;
            }
            const row = raw.map(toOut);
            budget -= row.reduce<number>((n, v) => n + sizeOf(v), 0);
            rows.push(row);
          }
          results.push({ columns: cursor.columnNames, rows, rows_written: cursor.rowsWritten, ...(truncated ? { truncated } : {}) });
        }
      });
    } catch (err) {
      return { ok: false, error: cleanSqliteMessage(err), statement: current };
    }
    return { ok: true, results };
  }

  /** Removes every table and row: the database is being deleted. */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}

/** SQLite's message without the runtime's suffix, e.g. `no such table: users`. */
function cleanSqliteMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/: SQLITE_[A-Z_]+$/, "");
}
