import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DUMP_START, type DumpPosition, dumpSql } from "../../src/databases/dump";
import type { ManagedDatabase, SqlValue } from "../../src/databases/managed-database";
import { DDL_DURING_EXPORT } from "../../src/databases/run-sql";
import { journalFullMessage } from "../../src/databases/snapshot-journal";
import { type ManagedDatabaseStub, freshDatabase, journalObjects, restoreDump, runSql, snapshot } from "./dump-helpers";

/**
 * A model-based test of the snapshot journal: random interleavings of dump pieces with inserts,
 * updates, deletes, rowid changes, REPLACEs and schema changes. Whatever the interleaving, the
 * archive restores to the database as it was when the dump began, bit for bit.
 */

/**
 * An INTEGER PRIMARY KEY table (the key is the rowid) with a UNIQUE column REPLACE collides on,
 * a plain rowid table, a WITHOUT ROWID table keyed under NOCASE, and a trigger of the customer's
 * own that writes to another table.
 */
const SCHEMA = `
CREATE TABLE r (id INTEGER PRIMARY KEY, i INTEGER, f REAL, t TEXT, b BLOB, u TEXT UNIQUE);
CREATE TABLE p (x, y);
CREATE TABLE w (k TEXT COLLATE NOCASE, n INTEGER, v, PRIMARY KEY (k, n)) WITHOUT ROWID;
CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT);
CREATE TRIGGER r_audit AFTER UPDATE OF t ON r BEGIN INSERT INTO audit (what) VALUES ('r ' || NEW.id || ' ' || quote(OLD.t)); END;
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 240)
INSERT INTO r SELECT x * 3, 9223372036854775807 - x, x * 0.1 + 1e-17, 'row ' || x, randomblob(x % 50), 'u' || x FROM n;
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200)
INSERT INTO p SELECT x, CASE x % 4 WHEN 0 THEN -9223372036854775808 WHEN 1 THEN 5e-324 WHEN 2 THEN X'00FF' ELSE NULL END FROM n;
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200)
INSERT INTO w SELECT char(65 + x % 26) || x, x % 7, x * 1.5 FROM n;
UPDATE r SET t = 'touched' WHERE id % 30 = 0;`;

type Statement = { sql: string; params: SqlValue[] };

const id = fc.integer({ min: -5, max: 800 });
const int64 = fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n).map(String);
const real = fc.double();
const text = fc.string({ maxLength: 12 });
const blob = fc.uint8Array({ maxLength: 24 }).map((bytes) => ({ blob: btoa(String.fromCharCode(...bytes)) }));
const value = fc.oneof(int64.map((v) => ({ literal: v })), real, text, blob, fc.constant(null));
const uniqueText = fc.integer({ min: 1, max: 260 }).map((x) => `u${x}`);
const wKey = fc.tuple(fc.integer({ min: 0, max: 25 }), fc.integer({ min: 1, max: 210 }), fc.boolean()).map(([c, x, lower]) => {
  const k = String.fromCharCode(65 + c) + x;
  return lower ? k.toLowerCase() : k;
});
const conflict = fc.constantFrom("", "OR REPLACE ", "OR IGNORE ");

/** A value as a bound parameter, or a 64-bit integer written out (a JS number cannot hold it). */
function bind(v: SqlValue | { literal: string }, params: SqlValue[]): string {
  if (v !== null && typeof v === "object" && "literal" in v) return v.literal;
  params.push(v);
  return "?";
}

function statement(build: (params: SqlValue[]) => string): Statement {
  const params: SqlValue[] = [];
  return { sql: build(params), params };
}

const write: fc.Arbitrary<Statement> = fc.oneof(
  fc.tuple(conflict, fc.option(id), int64, real, text, blob, uniqueText).map(([c, key, i, f, t, b, u]) =>
    statement((ps) => `INSERT ${c}INTO r (id, i, f, t, b, u) VALUES (${key === null ? "NULL" : key}, ${i}, ${bind(f, ps)}, ${bind(t, ps)}, ${bind(b, ps)}, ${bind(u, ps)})`),
  ),
  fc.tuple(id, value, text).map(([key, v, t]) => statement((ps) => `UPDATE r SET f = ${bind(v, ps)}, t = ${bind(t, ps)} WHERE id = ${key}`)),
  fc.tuple(conflict, id, id).map(([c, from, to]) => statement(() => `UPDATE ${c}r SET rowid = ${to} WHERE id = ${from}`)),
  fc.tuple(conflict, id, uniqueText).map(([c, key, u]) => statement(() => `UPDATE ${c}r SET u = '${u}' WHERE id = ${key}`)),
  fc.tuple(id, fc.integer({ min: 0, max: 20 })).map(([key, span]) => statement(() => `DELETE FROM r WHERE id BETWEEN ${key} AND ${key + span}`)),
  fc.tuple(value, value).map(([x, y]) => statement((ps) => `INSERT INTO p VALUES (${bind(x, ps)}, ${bind(y, ps)})`)),
  fc.tuple(conflict, id, id).map(([c, from, to]) => statement(() => `UPDATE ${c}p SET rowid = ${to} WHERE rowid = ${from}`)),
  fc.tuple(conflict, id, fc.option(id)).map(([c, key, at]) => statement(() => `INSERT ${c}INTO p (rowid, x) VALUES (${at === null ? "NULL" : at}, ${key})`)),
  fc.tuple(id, value).map(([key, v]) => statement((ps) => `UPDATE p SET y = ${bind(v, ps)} WHERE rowid % 50 = ${key % 50}`)),
  id.map((key) => statement(() => `DELETE FROM p WHERE rowid = ${key}`)),
  fc.tuple(conflict, wKey, fc.integer({ min: 0, max: 6 }), value).map(([c, k, n, v]) =>
    statement((ps) => `INSERT ${c}INTO w VALUES ('${k}', ${n}, ${bind(v, ps)})`),
  ),
  fc.tuple(wKey, fc.integer({ min: 0, max: 6 }), value).map(([k, n, v]) =>
    statement((ps) => `INSERT INTO w VALUES ('${k}', ${n}, ${bind(v, ps)}) ON CONFLICT DO UPDATE SET v = excluded.v`),
  ),
  fc.tuple(conflict, wKey, wKey).map(([c, from, to]) => statement(() => `UPDATE ${c}w SET k = '${to}' WHERE k = '${from}'`)),
  wKey.map((k) => statement(() => `DELETE FROM w WHERE k >= '${k}' AND k < '${k}5'`)),
);

const ddl = fc.constantFrom(
  "CREATE TABLE extra (a)",
  "DROP TABLE p",
  "ALTER TABLE r ADD COLUMN z",
  "/* a comment first */ CREATE INDEX r_t ON r (t)",
  "INSERT INTO p VALUES (1, 2); DROP TRIGGER r_audit",
);

type Step = { kind: "write"; statement: Statement } | { kind: "ddl"; sql: string } | { kind: "piece" } | { kind: "resume" };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: write.map((s) => ({ kind: "write" as const, statement: s })) },
  { weight: 1, arbitrary: ddl.map((sql) => ({ kind: "ddl" as const, sql })) },
  { weight: 4, arbitrary: fc.constant({ kind: "piece" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "resume" as const }) },
);

/**
 * Inside the object: opens a leased dump (its journal), then runs the steps, a piece being one page
 * of the dump and a resume taking the dump up again from the last piece's position, as the next
 * export invocation would. Returns the dump's text and what the steps saw.
 */
function interleave(stub: ManagedDatabaseStub, steps: Step[]) {
  return runInDurableObject(stub as unknown as DurableObjectStub<ManagedDatabase>, async (instance, state) => {
    const lease = crypto.randomUUID();
    instance.closeDump(instance.openDump({ lease }));
    let position: DumpPosition | null = DUMP_START;
    let pieces = dumpSql(state.storage.sql, position);
    let text = "";
    const refusals: string[] = [];
    const piece = () => {
      const next = pieces.next();
      if (next.done) return false;
      text += new TextDecoder().decode(next.value.bytes);
      position = next.value.next;
      return true;
    };
    for (const s of steps) {
      if (s.kind === "piece") piece();
      else if (s.kind === "resume" && position !== null) pieces = dumpSql(state.storage.sql, JSON.parse(JSON.stringify(position)) as DumpPosition);
      else if (s.kind === "ddl") {
        const outcome = await instance.execute(s.sql);
        refusals.push(outcome.ok ? "accepted" : outcome.error);
      } else if (s.kind === "write") {
        // Any outcome but a wait: a write may fail on its own terms (a UNIQUE or key collision).
        const outcome = await instance.execute(s.statement.sql, s.statement.params);
        if (!outcome.ok && /export/.test(outcome.error)) refusals.push(`write refused: ${outcome.error}`);
      }
    }
    while (piece());
    instance.releaseDump(lease);
    return { text, refusals };
  });
}

describe("a dump under a snapshot journal", () => {
  it("restores to the database as it was when the dump began, whatever writes and schema changes come between its pieces", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 80 }), async (steps) => {
        const db = freshDatabase();
        await runSql(db.stub, SCHEMA);
        const before = await snapshot(db.stub);
        const { text, refusals } = await interleave(db.stub, steps);
        // Schema changes are refused with a clear message; no write is.
        expect(refusals).toEqual(steps.filter((s) => s.kind === "ddl").map(() => DDL_DURING_EXPORT));
        const copy = freshDatabase();
        await restoreDump(copy.stub, text);
        expect(await snapshot(copy.stub)).toEqual(before);
        expect(await journalObjects(db.stub)).toEqual([]);
      }),
      { numRuns: 100 },
    );
  }, 300_000);
});

/** Reads a dump to its end after `between` ran with it open past its first piece; returns the text. */
async function dumpAround(stub: ManagedDatabaseStub, between: () => Promise<void>): Promise<string> {
  const lease = crypto.randomUUID();
  const id = await stub.openDump({ lease });
  await between();
  let text = "";
  for (let piece = await stub.readDump(id); piece !== null; piece = await stub.readDump(id)) text += new TextDecoder().decode(piece.bytes);
  return text;
}

async function restored(text: string) {
  const copy = freshDatabase();
  await restoreDump(copy.stub, text);
  return snapshot(copy.stub);
}

describe("each kind of table under a snapshot journal", () => {
  it("an INTEGER PRIMARY KEY is the rowid: changing it is a rowid change, and the old row stays in the archive", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (id INTEGER PRIMARY KEY, v REAL); INSERT INTO t VALUES (1, 0.1), (2, 5e-324), (9223372036854775807, -0.0);");
    const before = await snapshot(db.stub);
    const text = await dumpAround(db.stub, async () => {
      await runSql(db.stub, "UPDATE t SET id = 5 WHERE id = 1; UPDATE t SET id = 1, v = 2.5 WHERE id = 2; INSERT INTO t (v) VALUES (7); DELETE FROM t WHERE id = 9223372036854775807; INSERT INTO t VALUES (3, 3)");
    });
    expect(await restored(text)).toEqual(before);
  });

  it("a WITHOUT ROWID table is kept by its primary key under the key's own collation", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (k TEXT COLLATE NOCASE PRIMARY KEY, v BLOB) WITHOUT ROWID; INSERT INTO t VALUES ('a', X'01'), ('B', X'02'), ('c', NULL);");
    const before = await snapshot(db.stub);
    const text = await dumpAround(db.stub, async () => {
      await runSql(db.stub, "UPDATE t SET k = 'A' WHERE k = 'a'; INSERT OR REPLACE INTO t VALUES ('b', X'FF'); UPDATE t SET k = 'z' WHERE k = 'c'; INSERT INTO t VALUES ('d', X'04')");
    });
    expect(await restored(text)).toEqual(before);
  });

  it("a virtual table is copied when the dump begins, so writes to it wait for no one either", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE VIRTUAL TABLE notes USING fts5(body); INSERT INTO notes VALUES ('one'), ('two');");
    const before = await snapshot(db.stub);
    const text = await dumpAround(db.stub, async () => {
      await runSql(db.stub, "INSERT INTO notes VALUES ('three'); DELETE FROM notes WHERE body = 'one'");
    });
    expect(text).toContain("'one'");
    expect(text).not.toContain("'three'");
    expect(await restored(text)).toEqual(before);
  });

  it("a table with no usable row key refuses writes until the dump ends, saying why", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (rowid TEXT, _rowid_ TEXT, oid TEXT); INSERT INTO t VALUES ('a', 'b', 'c');");
    const before = await snapshot(db.stub);
    const text = await dumpAround(db.stub, async () => {
      expect(await db.stub.execute("INSERT INTO t VALUES ('x', 'y', 'z')")).toEqual({
        ok: false,
        error: "This table cannot be changed while an export of the database is running: it has no row key the export can follow. Try again when the export has finished.",
        statement: 0,
      });
    });
    expect(await restored(text)).toEqual(before);
    expect(await db.stub.execute("INSERT INTO t VALUES ('x', 'y', 'z')")).toMatchObject({ ok: true });
  });
});

describe("the journal's life", () => {
  it("is dropped when the lease is released or the reader closes an unleased dump, and its names are reserved", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    const lease = crypto.randomUUID();
    await db.stub.closeDump(await db.stub.openDump({ lease }));
    expect((await journalObjects(db.stub)).length).toBeGreaterThan(0);
    expect(await db.stub.execute("DELETE FROM _export_snapshot_j0")).toEqual({ ok: false, error: "Names beginning with _export_snapshot_ are reserved for exports.", statement: 0 });
    await db.stub.releaseDump(lease);
    expect(await journalObjects(db.stub)).toEqual([]);
    expect(await db.stub.execute("CREATE TABLE u (y)")).toMatchObject({ ok: true });

    await db.stub.closeDump(await db.stub.openDump());
    expect(await journalObjects(db.stub)).toEqual([]);
  });

  it("outgrowing its bound fails that dump with the reason, and the database keeps answering", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (id INTEGER PRIMARY KEY, pad TEXT); WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2000) INSERT INTO t SELECT x, hex(randomblob(50)) FROM n;");
    const lease = crypto.randomUUID();
    const id = await db.stub.openDump({ lease, maxJournalBytes: 20_000 });
    expect(await db.stub.execute("UPDATE t SET pad = 'x'")).toMatchObject({ ok: true });
    const reason = journalFullMessage(20_000);
    expect(await db.stub.readDump(id).then(() => null, (err: Error) => err.message)).toBe(reason);
    expect(await db.stub.resumeDump(lease, { table: 0, after: null, offset: 0 }).then(() => null, (err: Error) => err.message)).toBe(reason);
    expect(await journalObjects(db.stub)).toEqual([]);
    expect(await db.stub.execute("SELECT count(*) FROM t WHERE pad = 'x'")).toMatchObject({ ok: true, results: [{ rows: [[2000]] }] });
    await db.stub.releaseDump(lease);
  });
});
