import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dumpSql } from "../../src/databases/dump";
import { dropJournal, openJournal } from "../../src/databases/snapshot-journal";
import { freshDatabase, runSql, textOf, withSql } from "./dump-helpers";

/**
 * A page of small rows is read whole (one group_concat of the page's literals) instead of row by
 * row. The archive must not change by a byte: on random values of every storage class, the dump
 * read that way equals, piece for piece and position for position, the dump read row by row.
 */

/** One value and how it is written into the table: a SQL literal, or a bound string or blob. */
type Cell = { sql: string } | { text: string } | { blob: Uint8Array };

const INT_EDGES = [0n, 1n, -1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 31n, -(2n ** 31n)];
const REAL_EDGES = ["-0.0", "0.0", "1e308", "-1e308", "1.7976931348623157e308", "5e-324", "-5e-324", "2.2250738585072014e-308", "0.1", "5822.3216635279", "1e999", "-1e999"];

const integer = fc.oneof(fc.constantFrom(...INT_EDGES), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })).map((n): Cell => ({ sql: String(n) }));
const real = fc
  .oneof(fc.constantFrom(...REAL_EDGES), fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? "-0.0" : String(d))))
  // CAST keeps the storage class REAL even where the literal reads as a whole number.
  .map((literal): Cell => ({ sql: `CAST(${literal.startsWith("-") ? `-(${literal.slice(1)})` : literal} AS REAL)` }));
const text = fc
  .oneof(
    { arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }), weight: 10 },
    { arbitrary: fc.string({ unit: fc.constantFrom("'", '"', "\n", "\r", "\0", "\t", ",", ");", "a", "é", "日", "🎉", "\u{10FFFF}"), maxLength: 30 }), weight: 10 },
    { arbitrary: fc.constant("'".repeat(5)), weight: 1 },
    // Now and then a large one, so that some pages fill a chunk part way through.
    { arbitrary: fc.nat({ max: 90_000 }).map((n) => "x".repeat(n)), weight: 1 },
  )
  .map((s): Cell => ({ text: s }));
const blob = fc.uint8Array({ maxLength: 64 }).map((b): Cell => ({ blob: b }));
const cell = fc.oneof(integer, real, text, blob, fc.constant<Cell>({ sql: "NULL" }));

/** Rows of three typeless columns, each value of any storage class. */
const rows = fc.array(fc.tuple(cell, cell, cell), { minLength: 1, maxLength: 400, size: "max" });

function insert(sql: SqlStorage, table: string, row: Cell[], key?: number): void {
  const bindings: (string | ArrayBuffer)[] = [];
  const values = row.map((c) => {
    if ("sql" in c) return c.sql;
    bindings.push("text" in c ? c.text : c.blob.slice().buffer);
    return "?";
  });
  sql.exec(`INSERT INTO ${table} VALUES (${key === undefined ? "" : `${key}, `}${values.join(", ")})`, ...bindings);
}

function pieces(sql: SqlStorage, reads: "auto" | "rows") {
  return [...dumpSql(sql, undefined, reads)];
}

describe("dump pages read whole", () => {
  it("give the very text and positions of pages read row by row, on random values of every type", async () => {
    await fc.assert(
      fc.asyncProperty(rows, fc.boolean(), async (data, withoutRowid) => {
        const db = freshDatabase();
        await runSql(
          db.stub,
          withoutRowid ? "CREATE TABLE t (k INTEGER PRIMARY KEY, a, b, c) WITHOUT ROWID;" : "CREATE TABLE t (a, b, c); CREATE TABLE \"odd \"\"name\"\"\" (x);",
        );
        await withSql(db.stub, (sql) => {
          // Keys out of order, so the walk order is the key's, not the insertion's.
          data.forEach((row, i) => insert(sql, "t", row, withoutRowid ? (i * 7919) % 100_003 : undefined));
          const auto = pieces(sql, "auto");
          const reference = pieces(sql, "rows");
          expect(auto.map((p) => p.next)).toEqual(reference.map((p) => p.next));
          expect(auto.map((p) => textOf([p]))).toEqual(reference.map((p) => textOf([p])));
        });
      }),
      { numRuns: 40 },
    );
  }, 300_000);

  it("reads whole pages once a table's rows are small, and cuts a chunk at the same row", async () => {
    const db = freshDatabase();
    await runSql(db.stub, "CREATE TABLE t (id INTEGER PRIMARY KEY, v);");
    await withSql(db.stub, (sql) => {
      // 3000 small rows (whole pages), then rows of 100,000 characters (chunks cut mid-page).
      sql.exec("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 3000) INSERT INTO t SELECT i, 'r' || i FROM s");
      sql.exec("WITH RECURSIVE s(i) AS (SELECT 3001 UNION ALL SELECT i + 1 FROM s WHERE i < 3020) INSERT INTO t SELECT i, printf('%.*c', 100000, 'y') FROM s");
      sql.exec("WITH RECURSIVE s(i) AS (SELECT 3021 UNION ALL SELECT i + 1 FROM s WHERE i < 4000) INSERT INTO t SELECT i, i * 0.5 FROM s");
      const auto = pieces(sql, "auto");
      expect(auto).toEqual(pieces(sql, "rows"));
      const text = textOf(auto);
      expect(text.match(/^INSERT INTO "t"/gm)).toHaveLength(4000);
      expect(text).toContain(`INSERT INTO "t"("id","v") VALUES(4000,2.0e+03);\n`);
    });
  }, 120_000);

  it("bind no page's LIMIT or OFFSET as a bare parameter, so each page's statement is prepared once", async () => {
    // SQLite's planner reads a bare `LIMIT ?n` and then compiles the statement again every time
    // that parameter is bound, which the runtime does for every page (PAGE_LIMIT in dump.ts).
    const db = freshDatabase();
    await runSql(
      db.stub,
      "CREATE TABLE r (id INTEGER PRIMARY KEY, v); CREATE TABLE k (name TEXT PRIMARY KEY, v) WITHOUT ROWID; CREATE TABLE o (rowid, _rowid_, oid);",
    );
    await withSql(db.stub, (sql) => {
      for (const [t, values] of [["r", "i, i"], ["k", "'n' || i, i"], ["o", "i, i, i"]]) {
        sql.exec(`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 300) INSERT INTO ${t} SELECT ${values} FROM s`);
      }
      const texts = new Set<string>();
      const recording = new Proxy(sql, {
        get(target, name) {
          if (name === "exec") return (text: string, ...bindings: SqlStorageValue[]) => (texts.add(text), target.exec(text, ...bindings));
          const value = Reflect.get(target, name);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const live = textOf([...dumpSql(recording)]);
      openJournal(sql, 1e9);
      const journaled = textOf([...dumpSql(recording)]);
      dropJournal(sql);
      expect(journaled).toBe(live);
      expect(live.match(/^INSERT INTO /gm)).toHaveLength(900);
      const paged = [...texts].filter((t) => /\bLIMIT\b/.test(t));
      // Pages of each walk: by rowid, by key, by offset, and through the snapshot's journal.
      expect(paged.some((t) => /"_export_snapshot_/.test(t))).toBe(true);
      expect(paged.some((t) => /\bOFFSET\b/.test(t))).toBe(true);
      for (const text of paged) expect(text).not.toMatch(/\b(LIMIT|OFFSET)\s+\?\d/);
    });
  });
});

