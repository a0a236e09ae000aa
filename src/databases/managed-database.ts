import { DurableObject } from "cloudflare:workers";
import { DUMP_START, type DumpPosition } from "./dump";
import { DumpCursor, type DumpEnd, type DumpPiece } from "./dump-cursor";
import { dropJournal, JournalFull, journalFullMessage, journalOverflow, openJournal } from "./snapshot-journal";
import { getConfig } from "../config";
import { checkStatements, type ExecuteOutcome, runStatements, type SqlValue } from "./run-sql";

/** The SQL console's values and results, as ManagedDatabase.execute takes and returns them (run-sql.ts). */
export type { ExecuteOutcome, SqlOutValue, SqlValue, StatementResult } from "./run-sql";

/**
 * A dump whose reader asks for nothing for this long is abandoned (and its journal dropped), so a
 * reader that died leaves nothing behind. Longer than one archive part takes to upload.
 */
export const DUMP_IDLE_TIMEOUT_MS = 120_000;

/**
 * A leased dump (an export's, read over several queue invocations) keeps its snapshot journal this
 * long after its last read, so the next invocation, or the retry of one that crashed, finds the
 * same snapshot. Longer than a continuation takes to be delivered and than the first retries' backoff.
 */
export const DUMP_LEASE_MS = 5 * 60_000;

/**
 * A lease's deadline moves with every read, in memory; its stored record (what an object that was
 * evicted or restarted goes by) is written again only once it has fallen this far behind. Writing
 * it on every read held each piece's reply until the write was on disk (the object's output
 * gate): one disk flush per piece, about every 256 KiB of dump, and one billed write. So after a
 * restart a lease holds its snapshot for at least DUMP_LEASE_MS minus this after the last read.
 */
export const LEASE_WRITE_INTERVAL_MS = 30_000;

/** What openDump takes. */
export interface OpenDumpOptions {
  /** A lease (named by an export's id) that keeps the snapshot across readers, so a later one can resumeDump. */
  lease?: string;
  /** The journal's bound (default: this object's EXPORT_JOURNAL_MAX_BYTES setting). */
  maxJournalBytes?: number;
}

/** A lease as the object's storage keeps it, so it outlives the object's eviction. */
interface LeaseRecord {
  id: string;
  expiresAt: number;
  /** Why the lease's snapshot was lost (its journal outgrew its bound): its dump fails with this. */
  failure?: string;
}
const LEASE_KEY = "dump-lease";

/** The snapshot in force: one at a time, each kept by a journal (snapshot-journal.ts). */
interface Lease extends LeaseRecord {
  /** False for a dump read by one reader only (openDump without a lease): it ends with that reader. */
  persisted: boolean;
  /** The deadline in the stored record (0: none written yet). */
  storedExpiresAt: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}


/**
 * One customer database: its data lives in this object's own SQLite storage. The worker reaches
 * it over RPC to run SQL from the console and to stream a dump for exports.
 */
export class ManagedDatabase extends DurableObject<Env> {
  /** Open dumps by id. */
  readonly #dumps = new Map<string, DumpCursor>();
  /** The lease each open dump reads under: its reads renew that lease. */
  readonly #dumpLeases = new Map<string, string>();
  /** The snapshot in force, if any: its journal is kept until the dump ends, is released, or the lease expires. */
  #lease: Lease | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // A lease outlives the object; any other journal (a lapsed lease's, a lone reader's) is dropped.
    void ctx.blockConcurrencyWhile(async () => {
      const saved = await ctx.storage.get<LeaseRecord>(LEASE_KEY);
      if (saved && saved.expiresAt > Date.now()) {
        this.#lease = { ...saved, persisted: true, storedExpiresAt: saved.expiresAt, timer: undefined };
        this.#lease.timer = this.#expireAt(saved);
      } else {
        if (saved) await ctx.storage.delete(LEASE_KEY);
        ctx.storage.transactionSync(() => dropJournal(ctx.storage.sql));
      }
    });
  }

  /**
   * Runs one or more statements as one transaction: all of them apply or none does.
   * Parameters bind to a single statement only. A running export never makes the call wait: the
   * export's snapshot journal keeps the rows' earlier versions (snapshot-journal.ts).
   */
  async execute(sql: string, params: SqlValue[] = []): Promise<ExecuteOutcome> {
    return this.#run(sql, params);
  }

  /**
   * Opens a dump of the whole database as SQL text (see dump.ts); returns its id for readDump.
   * The dump is the snapshot of this moment: SQL calls go on meanwhile, and a journal keeps what
   * they change as it was, until the dump has been read to its end, is closed, or is left unread
   * for DUMP_IDLE_TIMEOUT_MS. One snapshot at a time: opening a dump ends any other.
   *
   * Under a lease (`options.lease`), the snapshot is kept instead until the dump has been read to
   * its end, the lease is released, or DUMP_LEASE_MS pass without a read: a later reader may
   * then take the dump up again with resumeDump. Throws when the snapshot cannot be kept (its
   * journal would outgrow EXPORT_JOURNAL_MAX_BYTES at once).
   */
  openDump(options: OpenDumpOptions = {}): string {
    const id = crypto.randomUUID();
    const lease = options.lease ?? `dump:${id}`;
    this.#beginSnapshot(lease, options.lease !== undefined, options.maxJournalBytes ?? getConfig(this.env).EXPORT_JOURNAL_MAX_BYTES);
    this.#open(id, DUMP_START, lease);
    return id;
  }

  /**
   * Takes a leased dump up again at `from` (where an earlier piece of it ended): the pieces that
   * follow are the very text that followed then. Null when the lease is no longer held: the
   * snapshot is gone, so the dump must start over. Throws when the snapshot was lost for a reason
   * the export must fail with.
   */
  resumeDump(lease: string, from: DumpPosition): string | null {
    if (!(this.#lease?.id === lease && this.#lease.expiresAt > Date.now())) return null;
    if (this.#lease.failure !== undefined) throw new Error(this.#lease.failure);
    const id = crypto.randomUUID();
    this.#renew();
    this.#open(id, from, lease);
    return id;
  }

  #open(id: string, from: DumpPosition, lease: string): void {
    const cursor = new DumpCursor(this.ctx.storage.sql, {
      from,
      idleTimeoutMs: DUMP_IDLE_TIMEOUT_MS,
      onDone: (why) => {
        // A lone reader's snapshot ends with it; a leased one when its dump has been read to the end.
        if (why === "end" || this.#lease?.id !== lease || !this.#lease.persisted) this.releaseDump(lease);
        // A dump read to its end stays until its reader has been told so (readDump answers null).
        if (why === "end") this.#dumpLeases.delete(id);
        else this.#forget(id);
      },
    });
    this.#dumps.set(id, cursor);
    this.#dumpLeases.set(id, lease);
  }

  #forget(id: string): void {
    this.#dumps.delete(id);
    this.#dumpLeases.delete(id);
  }

  /**
   * The next piece of an open dump (about DUMP_READ_BYTES of SQL) and where the dump stands after it, or
   * null once it has all been read. Each piece is produced only when asked for, so the reader sets
   * the pace and nothing piles up; SQL calls run between pieces.
   */
  readDump(id: string): DumpPiece | null {
    const cursor = this.#dumps.get(id);
    if (!cursor) throw new Error("This dump is no longer open: it was closed, failed, or left unread for too long.");
    const lease = this.#dumpLeases.get(id);
    if (lease !== undefined && lease !== this.#lease?.id) {
      // The snapshot is gone: what this dump would read next is another one.
      this.closeDump(id);
      throw new Error("This dump's lease has ended: the dump must start over.");
    }
    if (lease !== undefined && this.#lease?.failure !== undefined) {
      const failure = this.#lease.failure;
      this.closeDump(id);
      throw new Error(failure);
    }
    const piece = cursor.read();
    if (piece === null) this.#forget(id);
    // (A read that reached the end has ended the lease already.)
    else if (lease !== undefined && lease === this.#lease?.id) this.#renew();
    return piece;
  }

  /** Closes an open dump early (its reader cancelled or paused); a lease keeps its snapshot. */
  closeDump(id: string): void {
    this.#dumps.get(id)?.close();
    this.#forget(id);
  }

  /** Ends a dump's snapshot (its export ended some other way): its journal is dropped. */
  releaseDump(lease: string): void {
    if (this.#lease?.id !== lease) return;
    clearTimeout(this.#lease.timer);
    const persisted = this.#lease.persisted;
    this.#lease = undefined;
    this.ctx.storage.transactionSync(() => dropJournal(this.ctx.storage.sql));
    if (persisted) void this.ctx.storage.delete(LEASE_KEY);
  }

  /** Takes a new snapshot under `lease`, ending any other. */
  #beginSnapshot(lease: string, persisted: boolean, maxBytes: number): void {
    if (this.#lease) this.releaseDump(this.#lease.id);
    try {
      this.ctx.storage.transactionSync(() => openJournal(this.ctx.storage.sql, maxBytes));
    } catch (err) {
      this.ctx.storage.transactionSync(() => dropJournal(this.ctx.storage.sql));
      throw err instanceof JournalFull ? new Error(err.message) : err;
    }
    this.#lease = { id: lease, expiresAt: Infinity, persisted, storedExpiresAt: 0, timer: undefined };
    if (persisted) this.#renew();
  }

  /** Renews the lease in force: its snapshot is kept for DUMP_LEASE_MS from now (stored as LEASE_WRITE_INTERVAL_MS says). */
  #renew(): void {
    const lease = this.#lease;
    if (!lease?.persisted) return;
    clearTimeout(lease.timer);
    lease.expiresAt = Date.now() + DUMP_LEASE_MS;
    lease.timer = this.#expireAt(lease);
    if (lease.expiresAt - lease.storedExpiresAt < LEASE_WRITE_INTERVAL_MS) return;
    lease.storedExpiresAt = lease.expiresAt;
    void this.ctx.storage.put(LEASE_KEY, this.#record(lease));
  }

  #record(lease: Lease): LeaseRecord {
    return { id: lease.id, expiresAt: lease.expiresAt, ...(lease.failure !== undefined ? { failure: lease.failure } : {}) };
  }

  #expireAt(record: LeaseRecord): ReturnType<typeof setTimeout> {
    return setTimeout(() => this.releaseDump(record.id), Math.max(0, record.expiresAt - Date.now()));
  }

  /** The snapshot's journal outgrew its bound: it is dropped, and its dump fails saying why. */
  #checkJournal(): void {
    const lease = this.#lease;
    if (!lease || lease.failure !== undefined) return;
    const over = journalOverflow(this.ctx.storage.sql);
    if (!over) return;
    lease.failure = journalFullMessage(over.maxBytes);
    this.ctx.storage.transactionSync(() => dropJournal(this.ctx.storage.sql));
    if (!lease.persisted) return;
    lease.storedExpiresAt = lease.expiresAt;
    void this.ctx.storage.put(LEASE_KEY, this.#record(lease));
  }

  #run(sql: string, params: SqlValue[]): ExecuteOutcome {
    const statements = checkStatements(sql, params, this.#lease !== undefined && this.#lease.failure === undefined);
    if (!Array.isArray(statements)) return statements;
    try {
      return runStatements(this.ctx.storage, statements, params);
    } finally {
      this.#checkJournal();
    }
  }

  /** Removes every table and row: the database is being deleted. */
  async destroy(): Promise<void> {
    for (const id of [...this.#dumps.keys()]) this.closeDump(id);
    if (this.#lease) this.releaseDump(this.#lease.id);
    await this.ctx.storage.deleteAll();
  }
}
