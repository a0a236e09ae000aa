import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DUMP_IDLE_TIMEOUT_MS, DUMP_LEASE_MS, LEASE_WRITE_INTERVAL_MS } from "../../src/databases/managed-database";
import { type ManagedDatabaseStub, freshDatabase, journalObjects, readText, runSql, textOf } from "./dump-helpers";
import { dumpStream } from "../../src/databases/dump-stream";

/**
 * A leased dump's snapshot lapses by the clock: DUMP_LEASE_MS after the last read its journal is
 * dropped and resumeDump answers null, while a read before then renews the lease.
 *
 * The clock is vitest's fake one (Date, setTimeout, clearTimeout): the Durable Object runs in the
 * test's isolate, so the lease's deadline (Date.now) and its expiry timer (setTimeout) both follow
 * it. The fake timers are advanced inside the object (runInDurableObject), so the expiry timer's
 * callback, which drops the journal, runs in the object's own context as a real timer's would.
 */

/** Enough rows for several dump pieces (a piece is about 256 KiB). */
const DATA = `
CREATE TABLE items (id INTEGER PRIMARY KEY, body TEXT);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2500)
INSERT INTO items SELECT x, hex(randomblob(200)) FROM n;`;

/** The object's persisted lease record (what outlives an eviction), if any. */
const LEASE_KEY = "dump-lease";

function inObject<R>(stub: ManagedDatabaseStub, fn: (state: DurableObjectState) => R | Promise<R>): Promise<R> {
  return runInDurableObject(stub as unknown as DurableObjectStub, (_instance: unknown, state) => fn(state));
}

/** Moves the fake clock on by `ms`, firing the object's timers that fall due, in the object. */
function advance(stub: ManagedDatabaseStub, ms: number): Promise<void> {
  return inObject(stub, async () => {
    await vi.advanceTimersByTimeAsync(ms);
  });
}

const leaseRecord = (stub: ManagedDatabaseStub) => inObject(stub, (state) => state.storage.get<{ id: string; expiresAt: number }>(LEASE_KEY));

afterEach(() => void vi.useRealTimers());

/** Turns the fake clock on, opens a leased dump of `stub` and reads its first piece (at `readAt`). */
async function leasedDump(stub: ManagedDatabaseStub) {
  vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
  const lease = crypto.randomUUID();
  const id = await stub.openDump({ lease });
  const readAt = Date.now();
  const first = (await stub.readDump(id))!;
  return { lease, id, readAt, first };
}

describe("a leased dump on the clock", () => {
  it("lapses DUMP_LEASE_MS after its last read: the journal is dropped and resumeDump answers null", async () => {
    const db = freshDatabase();
    await runSql(db.stub, DATA);
    const { lease, id, readAt, first } = await leasedDump(db.stub);
    expect(first.next).not.toBeNull();
    await db.stub.closeDump(id);
    expect(await journalObjects(db.stub)).not.toEqual([]);
    expect(await leaseRecord(db.stub)).toEqual({ id: lease, expiresAt: readAt + DUMP_LEASE_MS });

    // One millisecond short of the deadline the snapshot is still kept.
    await advance(db.stub, DUMP_LEASE_MS - 1);
    expect(await journalObjects(db.stub)).not.toEqual([]);
    expect(await leaseRecord(db.stub)).toMatchObject({ id: lease });

    // At the deadline the lease lapses: its journal and its record go, and the dump cannot be taken up again.
    await advance(db.stub, 1);
    expect(await journalObjects(db.stub)).toEqual([]);
    expect(await leaseRecord(db.stub)).toBeUndefined();
    expect(await db.stub.resumeDump(lease, first.next!)).toBeNull();
    // Nothing holds the schema any more: a schema change is accepted again.
    expect(await db.stub.execute("CREATE TABLE after_lapse (x)")).toMatchObject({ ok: true });
  });

  it("is refused by the clock alone once its deadline has passed, even before the expiry timer has run", async () => {
    const db = freshDatabase();
    await runSql(db.stub, DATA);
    const { lease, id, first } = await leasedDump(db.stub);
    await db.stub.closeDump(id);

    // The system time jumps to the deadline without running any timer (as when the timer is late).
    vi.setSystemTime(Date.now() + DUMP_LEASE_MS);
    expect(await journalObjects(db.stub)).not.toEqual([]);
    expect(await db.stub.resumeDump(lease, first.next!)).toBeNull();
    // The timer, when it runs, drops the journal.
    await advance(db.stub, DUMP_LEASE_MS);
    expect(await journalObjects(db.stub)).toEqual([]);
    expect(await leaseRecord(db.stub)).toBeUndefined();
  });

  it("is renewed by each read: past the first read's deadline, a resume just before the last read's deadline goes on with the same snapshot", async () => {
    const db = freshDatabase();
    await runSql(db.stub, DATA);
    const whole = (await readText(dumpStream(db.stub))).text;
    const { lease, id, readAt, first } = await leasedDump(db.stub);
    const firstDeadline = readAt + DUMP_LEASE_MS;

    // A second read a while later (within the reader's idle limit) renews the lease.
    const gap = DUMP_IDLE_TIMEOUT_MS / 2;
    await advance(db.stub, gap);
    const second = (await db.stub.readDump(id))!;
    expect(second.next).not.toBeNull();
    const lastDeadline = Date.now() + DUMP_LEASE_MS;
    expect(await leaseRecord(db.stub)).toEqual({ id: lease, expiresAt: lastDeadline });
    await db.stub.closeDump(id);

    // Writes come in meanwhile; the snapshot keeps the rows as they were.
    expect(await db.stub.execute("UPDATE items SET body = 'changed' WHERE id % 7 = 0; DELETE FROM items WHERE id > 2400; INSERT INTO items (body) VALUES ('new')")).toMatchObject({ ok: true });

    // Past the first read's deadline, one millisecond short of the last read's.
    await advance(db.stub, DUMP_LEASE_MS - gap);
    expect(Date.now()).toBe(firstDeadline);
    expect(await journalObjects(db.stub)).not.toEqual([]);
    await advance(db.stub, gap - 1);
    expect(Date.now()).toBe(lastDeadline - 1);
    expect(await journalObjects(db.stub)).not.toEqual([]);

    const again = await db.stub.resumeDump(lease, second.next!);
    expect(again).not.toBeNull();
    const rest = await readText(dumpStream(db.stub, { id: again! }));
    expect(textOf([first, second]) + rest.text).toBe(whole);
    // Read to its end, the lease is over and its journal gone.
    expect(await journalObjects(db.stub)).toEqual([]);
    expect(await leaseRecord(db.stub)).toBeUndefined();
  });

  it("stores a renewal only once the stored deadline has fallen LEASE_WRITE_INTERVAL_MS behind, while every read moves the deadline kept", async () => {
    const db = freshDatabase();
    await runSql(db.stub, DATA);
    const { lease, id, readAt } = await leasedDump(db.stub);
    const stored = { id: lease, expiresAt: readAt + DUMP_LEASE_MS };
    expect(await leaseRecord(db.stub)).toEqual(stored);

    // A read sooner than the interval: the stored record stays, the snapshot's deadline moves.
    await advance(db.stub, LEASE_WRITE_INTERVAL_MS - 1);
    expect(await db.stub.readDump(id)).not.toBeNull();
    const moved = Date.now() + DUMP_LEASE_MS;
    expect(await leaseRecord(db.stub)).toEqual(stored);
    // A read once the stored deadline is the interval behind writes the new one.
    await advance(db.stub, 1);
    expect(await db.stub.readDump(id)).not.toBeNull();
    const last = Date.now() + DUMP_LEASE_MS;
    expect(await leaseRecord(db.stub)).toEqual({ id: lease, expiresAt: last });
    expect(last - moved).toBe(1);
    await db.stub.closeDump(id);

    // The snapshot is kept until the last read's deadline, not the first one's.
    await advance(db.stub, last - Date.now() - 1);
    expect(await journalObjects(db.stub)).not.toEqual([]);
    await advance(db.stub, 1);
    expect(await journalObjects(db.stub)).toEqual([]);
  });

  it("keeps the snapshot past the stored deadline when reads came sooner than the interval, up to the last read's deadline", async () => {
    const db = freshDatabase();
    await runSql(db.stub, DATA);
    const { lease, id, readAt } = await leasedDump(db.stub);
    await advance(db.stub, LEASE_WRITE_INTERVAL_MS / 2);
    expect(await db.stub.readDump(id)).not.toBeNull();
    const deadline = Date.now() + DUMP_LEASE_MS;
    await db.stub.closeDump(id);
    expect(await leaseRecord(db.stub)).toEqual({ id: lease, expiresAt: readAt + DUMP_LEASE_MS });

    // Past the stored deadline the lease in force still holds the snapshot, to its own deadline.
    await advance(db.stub, readAt + DUMP_LEASE_MS - Date.now());
    expect(await journalObjects(db.stub)).not.toEqual([]);
    await advance(db.stub, deadline - Date.now());
    expect(await journalObjects(db.stub)).toEqual([]);
    expect(await leaseRecord(db.stub)).toBeUndefined();
  });
});
