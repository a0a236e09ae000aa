import { DurableObject } from "cloudflare:workers";
import { DUMP_START, DumpCursor, type DumpEnd, type DumpPiece, type DumpPosition } from "./dump";
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

/**
 * A leased dump (an export's, read over several queue invocations) keeps writes held this long
 * after its last read, so the next invocation, or the retry of one that crashed, finds the same
 * snapshot. Longer than a continuation takes to be delivered and than the first retries' backoff.
 */
export const DUMP_LEASE_MS = 5 * 60_000;

/** What openDump takes. */
export interface OpenDumpOptions {
  /** A lease (named by an export's id) that holds writes across readers, so a later one can resumeDump. */
  lease?: string;
}

/** A lease as the object's storage keeps it, so it outlives the object's eviction. */
interface LeaseRecord {
  id: string;
  expiresAt: number;
}
const LEASE_KEY = "dump-lease";

interface Lease extends LeaseRecord {
  release: () => void;
  timer: ReturnType<typeof setTimeout>;
}

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
  /** The lease each leased open dump reads under: its reads renew that lease. */
  readonly #dumpLeases = new Map<string, string>();
  /** The dump lease in force, if any: it holds SQL calls until the dump ends, is released, or expires. */
  #lease: Lease | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // A lease outlives the object: SQL calls of a fresh instance wait for it too.
    void ctx.blockConcurrencyWhile(async () => {
      const saved = await ctx.storage.get<LeaseRecord>(LEASE_KEY);
      if (saved && saved.expiresAt > Date.now()) this.#holdLease(saved);
      else if (saved) await ctx.storage.delete(LEASE_KEY);
    });
  }

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
   *
   * Under a lease (`options.lease`), SQL calls wait instead until the dump has been read to its
   * end, the lease is released, or DUMP_LEASE_MS pass without a read: a later reader may then take
   * the dump up again with resumeDump.
   */
  openDump(options: OpenDumpOptions = {}): string {
    const id = crypto.randomUUID();
    const { lease } = options;
    if (lease === undefined) {
      this.#open(id, DUMP_START, this.#hold.acquire());
    } else {
      this.#takeLease(lease);
      this.#open(id, DUMP_START, (why) => why === "end" && this.releaseDump(lease), lease);
    }
    return id;
  }

  /**
   * Takes a leased dump up again at `from` (where an earlier piece of it ended): the pieces that
   * follow are the very text that followed then. Null when the lease is no longer held: the
   * database may have taken writes since, so the dump must start over.
   */
  resumeDump(lease: string, from: DumpPosition): string | null {
    if (!(this.#lease?.id === lease && this.#lease.expiresAt > Date.now())) return null;
    const id = crypto.randomUUID();
    this.#takeLease(lease);
    this.#open(id, from, (why) => why === "end" && this.releaseDump(lease), lease);
    return id;
  }

  #open(id: string, from: DumpPosition, onDone: (why: DumpEnd) => unknown, lease?: string): void {
    const cursor = new DumpCursor(this.ctx.storage.sql, {
      from,
      idleTimeoutMs: DUMP_IDLE_TIMEOUT_MS,
      onDone: (why) => {
        onDone(why);
        // A dump read to its end stays until its reader has been told so (readDump answers null),
        // its lease no longer in question.
        if (why === "end") this.#dumpLeases.delete(id);
        else this.#forget(id);
      },
    });
    this.#dumps.set(id, cursor);
    if (lease !== undefined) this.#dumpLeases.set(id, lease);
  }

  #forget(id: string): void {
    this.#dumps.delete(id);
    this.#dumpLeases.delete(id);
  }

  /**
   * The next piece of an open dump (about 1 MiB of SQL) and where the dump stands after it, or
   * null once it has all been read. Each piece is produced only when asked for, so the reader sets
   * the pace and nothing piles up.
   */
  readDump(id: string): DumpPiece | null {
    const cursor = this.#dumps.get(id);
    if (!cursor) throw new Error("This dump is no longer open: it was closed, failed, or left unread for too long.");
    const lease = this.#dumpLeases.get(id);
    if (lease !== undefined && lease !== this.#lease?.id) {
      // Writes may have come in since the lease ended: what this dump would read next is another snapshot.
      this.closeDump(id);
      throw new Error("This dump's lease has ended: the dump must start over.");
    }
    const piece = cursor.read();
    if (piece === null) this.#forget(id);
    // (A read that reached the end has ended the lease already.)
    else if (lease !== undefined && lease === this.#lease?.id) this.#takeLease(lease);
    return piece;
  }

  /** Closes an open dump early (its reader cancelled or paused); SQL calls go on unless a lease holds them. */
  closeDump(id: string): void {
    this.#dumps.get(id)?.close();
    this.#forget(id);
  }

  /** Ends a dump lease (its export ended some other way): SQL calls go on. */
  releaseDump(lease: string): void {
    if (this.#lease?.id !== lease) return;
    this.#lease.release();
    clearTimeout(this.#lease.timer);
    this.#lease = undefined;
    void this.ctx.storage.delete(LEASE_KEY);
  }

  /** Takes `lease` (ending any other) or renews it: it holds SQL calls for DUMP_LEASE_MS from now. */
  #takeLease(lease: string): void {
    if (this.#lease && this.#lease.id !== lease) this.releaseDump(this.#lease.id);
    const record = { id: lease, expiresAt: Date.now() + DUMP_LEASE_MS };
    void this.ctx.storage.put(LEASE_KEY, record);
    if (this.#lease) {
      clearTimeout(this.#lease.timer);
      Object.assign(this.#lease, record, { timer: this.#expireAt(record) });
    } else {
      this.#holdLease(record);
    }
  }

  #holdLease(record: LeaseRecord): void {
    this.#lease = { ...record, release: this.#hold.acquire(), timer: this.#expireAt(record) };
  }

  #expireAt(record: LeaseRecord): ReturnType<typeof setTimeout> {
    return setTimeout(() => this.releaseDump(record.id), Math.max(0, record.expiresAt - Date.now()));
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
