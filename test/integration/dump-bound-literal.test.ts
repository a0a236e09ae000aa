import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { boundLiteral } from "../../src/databases/dump-pages";
import { freshDatabase, withSql } from "./dump-helpers";

/**
 * A dump's pages bind the walk key of the page before (the quote() literals its position holds)
 * instead of writing it into the query, so every page of a table is one SQL text. boundLiteral
 * must read each literal back as the very value the literal written inline would be, and compare
 * with a column exactly as that literal would, whatever the column's affinity and collation.
 */

/** Values of every storage class, at their edges, as SQL expressions. */
const VALUES = [
  "NULL",
  "0",
  "-1",
  "9007199254740993",
  "9223372036854775807",
  "-9223372036854775808",
  "CAST(0 AS REAL)",
  "-0.0",
  "0.1",
  "5822.3216635279",
  "1e308",
  "-1.7976931348623157e308",
  "5e-324",
  "2.2250738585072014e-308",
  "1e999",
  "-1e999",
  "CAST(10 AS REAL)",
  "''",
  "'10'",
  "'9'",
  "'it''s'",
  "'a' || char(10) || 'b'",
  "'日本 🎉'",
  "'NULL'",
  "'X''00'''",
  "'1.5'",
  "'ABC'",
  "'abc'",
  "x''",
  "x'00ff'",
  "x'27'",
];

const COLUMNS = ["i INTEGER", "t TEXT", "r REAL", "n NUMERIC", "b BLOB", "a", "c TEXT COLLATE NOCASE"];

describe("boundLiteral", () => {
  it("reads every quote() literal back as the same value: same type, same literal", async () => {
    const db = freshDatabase();
    const rows = await withSql(db.stub, (sql) =>
      VALUES.map((value) => {
        const [literal, type] = sql.exec(`SELECT quote(${value}), typeof(${value})`).raw().next().value as [string, string];
        const [back, backType] = sql.exec(`SELECT quote(${boundLiteral(1)}), typeof(${boundLiteral(1)})`, literal).raw().next().value as [string, string];
        return { value, literal: back, type: backType, expected: { value, literal, type } };
      }),
    );
    for (const row of rows) expect({ value: row.value, literal: row.literal, type: row.type }).toEqual(row.expected);
  });

  it("compares with a column of any affinity and collation exactly as the literal written inline", async () => {
    const db = freshDatabase();
    const mismatches = await withSql(db.stub, (sql) => {
      sql.exec(`CREATE TABLE k (${COLUMNS.join(", ")})`);
      const names = COLUMNS.map((c) => c.split(" ")[0]!);
      for (const value of VALUES) sql.exec(`INSERT INTO k VALUES (${names.map(() => value).join(", ")})`);
      const found: string[] = [];
      for (const value of VALUES) {
        const literal = sql.exec(`SELECT quote(${value})`).raw().next().value![0] as string;
        for (const column of names) {
          for (const op of [">", "=", "<"]) {
            const inline = sql.exec(`SELECT group_concat(rowid) FROM (SELECT rowid FROM k WHERE ${column} ${op} ${literal} ORDER BY rowid)`).raw().next().value![0];
            const bound = sql.exec(`SELECT group_concat(rowid) FROM (SELECT rowid FROM k WHERE ${column} ${op} ${boundLiteral(1)} ORDER BY rowid)`, literal).raw().next().value![0];
            if (inline !== bound) found.push(`${column} ${op} ${literal}: inline ${inline}, bound ${bound}`);
          }
        }
        // A walk key of two columns, as a WITHOUT ROWID table's page compares it.
        const inline = sql.exec(`SELECT count(*) FROM k WHERE (t, i) > (${literal}, ${literal})`).raw().next().value![0];
        const bound = sql.exec(`SELECT count(*) FROM k WHERE (t, i) > (${boundLiteral(1)}, ${boundLiteral(2)})`, literal, literal).raw().next().value![0];
        if (inline !== bound) found.push(`(t, i) > (${literal}, ${literal}): inline ${inline}, bound ${bound}`);
      }
      return found;
    });
    expect(mismatches).toEqual([]);
  });

  it("reads back random integers, REALs, texts and blobs exactly (fast-check)", async () => {
    const db = freshDatabase();
    const value = fc.oneof(
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
      fc.double({ noNaN: true }).map((d) => (Number.isFinite(d) ? `CAST(${d < 0 || Object.is(d, -0) ? `-(${String(-d)})` : String(d)} AS REAL)` : d > 0 ? "1e999" : "-1e999")),
      fc.string({ unit: "grapheme", maxLength: 20 }).map((s) => `'${s.replaceAll("\0", "").replaceAll("'", "''")}'`),
      fc.uint8Array({ maxLength: 16 }).map((b) => `x'${Buffer.from(b).toString("hex")}'`),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(value, { minLength: 1, maxLength: 20 }), async (values) => {
        const wrong = await withSql(db.stub, (sql) =>
          values.filter((v) => {
            const literal = sql.exec(`SELECT quote(${v})`).raw().next().value![0] as string;
            const same = sql.exec(`SELECT ${boundLiteral(1)} IS ${v} AND typeof(${boundLiteral(1)}) = typeof(${v}) AND quote(${boundLiteral(1)}) = ?1`, literal).raw().next().value![0];
            return same !== 1;
          }),
        );
        expect(wrong).toEqual([]);
      }),
      { numRuns: 50 },
    );
  });
});
