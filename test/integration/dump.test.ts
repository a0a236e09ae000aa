import { describe, expect, it } from "vitest";
import { type DumpPosition, dumpSql } from "../../src/databases/dump";
import { DUMP_READ_BYTES, DumpCursor } from "../../src/databases/dump-cursor";
import { DUMP_CHUNK_BYTES } from "../../src/databases/dump-reads";
import { type DumpSource, dumpStream } from "../../src/databases/dump-stream";
import { freshDatabase, journalObjects, readText, restoreDump, runSql, snapshot, textOf, withSql } from "./dump-helpers";

/** Every storage class at its edges, identifiers that need quoting, and every kind of schema object. */
const SAMPLE = `
CREATE TABLE kinds (id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB, n);
INSERT INTO kinds VALUES
  (1, 9223372036854775807, 0.1, 'it''s "quoted"', X'00FF10', NULL),
  (2, -9223372036854775808, 1e308, 'line one' || char(10) || 'line two' || char(13), X'', NULL),
  (3, 0, 5e-324, 'Zoë 日本語 🎉', NULL, 1.5),
  (4, -1, -2.5e-10, '', X'DEADBEEF', 'x'),
  (5, 2, 1.0, 'semi;colon -- not a comment', NULL, 1e-7),
  (6, 3, 123456789012345678.0, 'end', NULL, -0.0);
CREATE TABLE "weird ""name"" table" ("select" TEXT, "a b" INTEGER, "rowid" TEXT);
INSERT INTO "weird ""name"" table" VALUES ('from', 1, 'not the rowid'), ('where', 2, NULL);
CREATE TABLE empty_one (x TEXT);
CREATE TABLE counters (id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT);
INSERT INTO counters (label) VALUES ('a'), ('b'), ('c');
DELETE FROM counters WHERE id = 3;
CREATE TABLE pairs (k1 TEXT, k2 INTEGER, v BLOB, PRIMARY KEY (k1, k2)) WITHOUT ROWID;
INSERT INTO pairs VALUES ('a', 9223372036854775807, X'01'), ('a', -9223372036854775808, X'02'), ('b''c', 0, NULL);
CREATE TABLE shapes (w REAL, h REAL, area REAL GENERATED ALWAYS AS (w * h) STORED, half REAL AS (w / 2));
INSERT INTO shapes (w, h) VALUES (2, 3.5), (0.1, 0.2);
CREATE TABLE audit (id INTEGER PRIMARY KEY, what TEXT);
CREATE TRIGGER kinds_audit AFTER INSERT ON kinds BEGIN INSERT INTO audit (what) VALUES ('inserted; "kinds"'); END;
INSERT INTO kinds (id, t) VALUES (7, 'fires the trigger once');
CREATE INDEX kinds_t ON kinds (t);
CREATE UNIQUE INDEX "weird idx" ON "weird ""name"" table" ("a b");
CREATE VIEW big AS SELECT id, r FROM kinds WHERE r > 1;
CREATE VIRTUAL TABLE notes USING fts5(body);
INSERT INTO notes (body) VALUES ('full text one'), ('full text two');
`;

describe("database dump", () => {
  it("restores every value, type and schema object exactly", async () => {
    const source = freshDatabase();
    await runSql(source.stub, SAMPLE);
    const { text } = await readText(dumpStream(source.stub));

    const copy = freshDatabase();
    await restoreDump(copy.stub, text);
    const [before, after] = [await snapshot(source.stub), await snapshot(copy.stub)];
    expect(after.schema).toEqual(before.schema);
    expect(after.rows).toEqual(before.rows);
    // The trigger fired once in the source and must not fire again on restore.
    expect(after.rows["audit"]).toEqual(["1|'inserted; \"kinds\"'"]);
    expect(after.rows["sqlite_sequence"]).toEqual(["'counters'|3"]);
    expect(after.rows["kinds"]).toContain("1|9223372036854775807|0.1|'it''s \"quoted\"'|X'00FF10'|NULL");
  });

  it("writes schema first, rows as INSERTs, triggers last, all in one transaction", async () => {
    const db = freshDatabase();
    await runSql(db.stub, SAMPLE);
    const { text } = await readText(dumpStream(db.stub));
    const lines = text.split("\n");
    expect(lines.slice(0, 3)).toEqual(["PRAGMA foreign_keys=OFF;", "BEGIN TRANSACTION;", "CREATE TABLE kinds (id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB, n);"]);
    expect(text.endsWith("COMMIT;\n")).toBe(true);
    const at = (needle: string) => text.indexOf(needle);
    expect(at("CREATE INDEX kinds_t")).toBeGreaterThan(at("CREATE VIRTUAL TABLE notes"));
    expect(at("CREATE VIEW big")).toBeGreaterThan(at("CREATE INDEX kinds_t"));
    expect(at("\nINSERT INTO")).toBeGreaterThan(at("CREATE VIEW big"));
    expect(at("CREATE TRIGGER kinds_audit")).toBeGreaterThan(text.lastIndexOf("\nINSERT INTO"));
    expect(text).toContain(`INSERT INTO "weird ""name"" table"("select","a b","rowid") VALUES('from',1,'not the rowid');`);
    expect(text).toContain(`INSERT INTO "shapes"("w","h") VALUES(2.0e+00,3.5e+00);`);
    expect(text).toContain(`INSERT INTO "notes"("body") VALUES('full text one');`);
    expect(text).not.toMatch(/notes_(data|idx|content|docsize|config)/);
    expect(text).not.toMatch(/_cf_/);
  });

  it("skips the table in which the local runtime records the object's name", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE __miniflare_do_name (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO __miniflare_do_name VALUES (1, 'x');");
    const { text } = await readText(dumpStream(db.stub));
    expect(text).toBe("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCOMMIT;\n");
  });

  it("dumps an empty database as a valid empty transaction", async () => {
    const db = freshDatabase();
    const { text } = await readText(dumpStream(db.stub));
    expect(text).toBe("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCOMMIT;\n");
  });

  it("walks thousands of rows in bounded pieces", async () => {
    const source = freshDatabase();
    await runSql(
      source.stub,
      `CREATE TABLE big (id INTEGER PRIMARY KEY, payload TEXT);
       WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 6000)
       INSERT INTO big SELECT x * 1000003, hex(randomblob(100)) FROM n;
       CREATE TABLE keyed (v TEXT, k0 INTEGER, PRIMARY KEY (v, k0)) WITHOUT ROWID;
       WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2500)
       INSERT INTO keyed SELECT 'k' || (x % 7), x FROM n;
       CREATE TABLE hidden_rowid (rowid TEXT, _rowid_ TEXT, n INTEGER);
       WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1200)
       INSERT INTO hidden_rowid SELECT 'r' || x, 'q' || x, x FROM n;`,
    );
    const { text, chunks } = await readText(dumpStream(source.stub));
    // About DUMP_READ_BYTES per read: pieces of at most DUMP_CHUNK_BYTES plus a row are gathered up to it.
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...chunks)).toBeLessThan(DUMP_READ_BYTES + DUMP_CHUNK_BYTES + 1000);
    const copy = freshDatabase();
    await restoreDump(copy.stub, text);
    const after = await snapshot(copy.stub);
    expect(after.rows["big"]).toHaveLength(6000);
    expect(after.rows["keyed"]).toHaveLength(2500);
    expect(after.rows["hidden_rowid"]).toHaveLength(1200);
    expect(after).toEqual(await snapshot(source.stub));
  });

  it("answers SQL calls while a dump is read, and the dump stays the snapshot of its start", async () => {
    const db = freshDatabase();
    // Several reads' worth of rows, so the dump is still open after the first one.
    await runSql(
      db.stub,
      `CREATE TABLE t (x INTEGER, pad TEXT);
       WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 20000)
       INSERT INTO t SELECT v, hex(randomblob(100)) FROM n;`,
    );
    const before = await snapshot(db.stub);
    const reader = dumpStream(db.stub).getReader();
    const first = await reader.read();
    expect(await db.stub.execute("INSERT INTO t VALUES (-7, 'late'); UPDATE t SET pad = 'changed' WHERE x >= 19990; DELETE FROM t WHERE x BETWEEN 15000 AND 15010")).toMatchObject({ ok: true });
    let rest = "";
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest += new TextDecoder().decode(next.value);
    expect(rest).not.toContain("'late'");
    expect(rest).not.toContain("'changed'");
    const copy = freshDatabase();
    await restoreDump(copy.stub, new TextDecoder().decode(first.value) + rest);
    expect(await snapshot(copy.stub)).toEqual(before);
    expect(await journalObjects(db.stub)).toEqual([]);
  });

  it("lets SQL calls go on when the reader cancels", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (x INTEGER);");
    const reader = dumpStream(db.stub).getReader();
    await reader.read();
    await reader.cancel();
    expect(await db.stub.execute("INSERT INTO t VALUES (3)")).toMatchObject({ ok: true });
  });

  it("asks the object for the next piece only as the reader reads", async () => {
    const db = freshDatabase();
    await runSql(
      db.stub,
      `CREATE TABLE big (id INTEGER PRIMARY KEY, payload TEXT);
       WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 40000)
       INSERT INTO big SELECT x, hex(randomblob(100)) FROM n;`,
    );
    let reads = 0;
    const counted: DumpSource = {
      openDump: () => db.stub.openDump(),
      readDump: (id) => {
        reads++;
        return db.stub.readDump(id);
      },
      closeDump: (id) => db.stub.closeDump(id),
    };
    const reader = dumpStream(counted).getReader();
    await reader.read();
    await new Promise((r) => setTimeout(r, 100));
    // The piece read plus one asked for ahead; the rest (over 8 MB of SQL) waits for the reader.
    expect(reads).toBe(2);
    let pieces = 1;
    while (!(await reader.read()).done) pieces++;
    expect(pieces).toBeGreaterThan(5);
    expect(reads).toBe(pieces + 1);
  });

  it("refuses reads of a dump that was closed or never opened", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
    const id = await db.stub.openDump();
    await db.stub.closeDump(id);
    const message = "This dump is no longer open: it was closed, failed, or left unread for too long.";
    const refusal = (dumpId: string) => db.stub.readDump(dumpId).then(() => null, (err: Error) => err.message);
    expect(await refusal(id)).toBe(message);
    expect(await refusal(crypto.randomUUID())).toBe(message);
    expect(await db.stub.execute("INSERT INTO t VALUES (2)")).toMatchObject({ ok: true });
  });

  it("fails a dump whose reader went idle and lets go of the hold", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
    const outcome = await withSql(db.stub, async (sql) => {
      let released = false;
      const cursor = new DumpCursor(sql, { idleTimeoutMs: 20, onDone: () => (released = true) });
      await new Promise((r) => setTimeout(r, 60));
      const error = (() => {
        try {
          cursor.read();
          return null;
        } catch (err) {
          return (err as Error).message;
        }
      })();
      return { released, error };
    });
    expect(outcome).toEqual({ released: true, error: "The dump reader was idle for 20 ms." });
  });

  it("reads a dump to its end, then answers null", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
    const outcome = await withSql(db.stub, (sql) => {
      let released = false;
      const cursor = new DumpCursor(sql, { onDone: () => (released = true) });
      const piece = cursor.read()!.bytes;
      const text = new TextDecoder().decode(piece);
      const after = cursor.read();
      // The reader has had the piece (over RPC, a copy) by the time it asks again: its buffer is freed.
      return { text, released, after, pieceBytesAfter: piece.buffer.byteLength };
    });
    expect(outcome.text).toMatch(/^PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n[\s\S]*COMMIT;\n$/);
    expect(outcome).toMatchObject({ released: true, after: null, pieceBytesAfter: 0 });
  });
});

describe("a dump taken up again", () => {
  /** SAMPLE with enough rows that its tables take several pages, walked by rowid, key and offset. */
  const PAGED = `${SAMPLE}
    CREATE TABLE all_taken (rowid TEXT, _rowid_ TEXT, oid TEXT);
    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1200)
    INSERT INTO all_taken SELECT hex(randomblob(300)), x, NULL FROM n;
    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1500)
    INSERT INTO pairs SELECT 'k' || x, x, randomblob(300) FROM n;
    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1200)
    INSERT INTO "weird ""name"" table" SELECT hex(randomblob(200)), x + 10, NULL FROM n;
    INSERT INTO kinds (id, t) SELECT 100 + x, hex(randomblob(400)) FROM (WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000) SELECT x FROM n);`;

  it("at the position after any piece goes on with the very text that followed", async () => {
    const db = freshDatabase();
    await runSql(db.stub, PAGED);
    const mismatches = await withSql(db.stub, (sql) => {
      const pieces = [...dumpSql(sql)];
      const whole = textOf(pieces);
      const wrong: number[] = [];
      pieces.forEach((piece, i) => {
        if (piece.next === null) return;
        // The position travels as JSON (D1, RPC), so it is taken up again from its JSON form.
        const from = JSON.parse(JSON.stringify(piece.next)) as DumpPosition;
        const rest = textOf([...dumpSql(sql, from)]);
        if (textOf(pieces.slice(0, i + 1)) + rest !== whole) wrong.push(i);
      });
      return { count: pieces.length, last: pieces.at(-1)!.next, wrong };
    });
    expect(mismatches.count).toBeGreaterThan(10);
    expect(mismatches.last).toBeNull();
    expect(mismatches.wrong).toEqual([]);
  });

  it("refuses a position that does not fit the database or whose key is not a SQL literal", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
    const refusals = await withSql(db.stub, (sql) =>
      [
        { table: 5, after: null, offset: 0 },
        { table: -2, after: null, offset: 0 },
        { table: 0, after: ["1) OR (1=1"], offset: 0 },
        { table: 0, after: ["'unterminated"], offset: 0 },
        { table: 0, after: null, offset: -1 },
      ].map((from) => {
        try {
          [...dumpSql(sql, from)];
          return "accepted";
        } catch (err) {
          return (err as Error).message;
        }
      }),
    );
    expect(new Set(refusals)).toEqual(new Set(["This dump position does not fit the database."]));
  });

  it("under a lease keeps its snapshot after its reader let go, and goes on where that reader stopped", async () => {
    const db = freshDatabase();
    await runSql(db.stub, PAGED);
    const whole = (await readText(dumpStream(db.stub))).text;
    const lease = crypto.randomUUID();
    const id = await db.stub.openDump({ lease });
    const first = (await db.stub.readDump(id))!;
    await db.stub.closeDump(id);
    // Writes answer at once, between the readers too.
    expect(await db.stub.execute("INSERT INTO audit (what) VALUES ('between'); UPDATE pairs SET v = X'FF'; DELETE FROM kinds WHERE id > 500; UPDATE all_taken SET oid = 1")).toMatchObject({
      ok: false,
      error: "This table cannot be changed while an export of the database is running: it has no row key the export can follow. Try again when the export has finished.",
    });
    expect(await db.stub.execute("INSERT INTO audit (what) VALUES ('between'); UPDATE pairs SET v = X'FF'; DELETE FROM kinds WHERE id > 500")).toMatchObject({ ok: true });

    const again = await db.stub.resumeDump(lease, first.next!);
    expect(again).not.toBeNull();
    const rest = await readText(dumpStream(db.stub, { id: again! }));
    expect(new TextDecoder().decode(first.bytes) + rest.text).toBe(whole);
    // Read to its end, the lease is over and its journal gone.
    expect(await journalObjects(db.stub)).toEqual([]);
  });

  it("cannot be taken up again once its lease was released, since writes may have come in between", async () => {
    const db = freshDatabase();
    await runSql(db.stub, PAGED);
    const lease = crypto.randomUUID();
    const id = await db.stub.openDump({ lease });
    const first = (await db.stub.readDump(id))!;
    await db.stub.closeDump(id);
    await db.stub.releaseDump(lease);
    expect(await db.stub.execute("INSERT INTO audit (what) VALUES ('between')")).toMatchObject({ ok: true });
    expect(await db.stub.resumeDump(lease, first.next!)).toBeNull();
    expect(await db.stub.resumeDump("another lease", first.next!)).toBeNull();
  });

  it("stops a reader whose lease ended under it", async () => {
    const db = freshDatabase();
    await runSql(db.stub, PAGED);
    const lease = crypto.randomUUID();
    const id = await db.stub.openDump({ lease });
    await db.stub.readDump(id);
    await db.stub.releaseDump(lease);
    const refusal = await db.stub.readDump(id).then(() => null, (err: Error) => err.message);
    expect(refusal).toBe("This dump's lease has ended: the dump must start over.");
  });
});
