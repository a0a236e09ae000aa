/**
 * Dataset shapes beside today's mixed rows, each stressing one part of the dump: narrow rows (per-row
 * work: an integer, a short text and a REAL each), wide text (a few thousand rows of 50 KB text:
 * quoting and copying large strings) and blobs (hex encoding). Rows are generated inside SQLite from
 * the same deterministic draws as the mixed recipe (dataset.ts), so both sides hold the very same rows.
 */
import { type Recipe, MINSTD, P, VOCAB, codePoints, draw, rawSizeSqlOf, real, seedOf, words } from "./dataset";

export const SHAPES = ["mixed", "narrow", "wide", "blobs"] as const;
export type Shape = (typeof SHAPES)[number];

/** `count` rows from row `first` on, each with its generator state x; `vocab` holds the words. */
function rows(table: string, batch: number, first: number, count: number): string {
  return `WITH RECURSIVE seq(i, x) AS (SELECT ${first}, ${seedOf(table, batch)} UNION ALL SELECT i+1, x*${MINSTD}%${P} FROM seq WHERE i<${first + count - 1}),
vocab(v) AS (SELECT cast('${VOCAB}' AS blob))`;
}

/** Batches of `perBatch` rows up to `total`. */
function batched(total: number, perBatch: number, sql: (first: number, count: number, batch: number) => string) {
  return {
    batches: Math.ceil(total / perBatch),
    batchSql: (batch: number) => {
      const first = batch * perBatch + 1;
      return sql(first, Math.min(perBatch, total - first + 1), batch);
    },
  };
}

/** Narrow rows: an integer, a short text (one word) and a REAL at full precision. */
export function narrowRecipe(total: number): Recipe {
  const table = { narrow: ["id", "n", "t", "r"] };
  return {
    label: `narrow rows, ${total.toLocaleString("en")}`,
    schema: "CREATE TABLE narrow (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, t TEXT NOT NULL, r REAL NOT NULL);",
    ...batched(total, 100_000, (first, count, batch) =>
      `${rows("narrow", batch, first, count)}
INSERT INTO narrow (id, n, t, r) SELECT i, ${draw(1)} - 1073741824, ${words(2, 1)}, ${real(3, 100000)} FROM seq, vocab;`),
    rawSizeSql: rawSizeSqlOf(table),
  };
}

/** Pieces per wide row: about 1 KB of words each, so a row holds about 50 KB of text. */
const WIDE_PIECES = 48;

/** Wide text: one row of about 50 KB of words per row, concatenated from pieces in order. */
export function wideRecipe(total: number): Recipe {
  return {
    label: `wide text, ${total.toLocaleString("en")} rows of ~50 KB`,
    schema: "CREATE TABLE wide (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL);",
    ...batched(total, 100, (first, count, batch) =>
      `${rows("wide", batch, (first - 1) * WIDE_PIECES + 1, count * WIDE_PIECES)}
INSERT INTO wide (id, title, body) SELECT id, 'document ' || id, group_concat(piece, ' ') FROM
  (SELECT (i - 1) / ${WIDE_PIECES} + 1 AS id, ${words(1, 200)} AS piece FROM seq, vocab ORDER BY i) GROUP BY id;`),
    rawSizeSql: rawSizeSqlOf({ wide: ["id", "title", "body"] }),
  };
}

/** Pieces per blob: about 720 bytes each, so a blob holds about 50 KB. */
const BLOB_PIECES = 70;

/** Blobs: about 50 KB of pseudo-random bytes per row (all 256 values but 0 appear). */
export function blobsRecipe(total: number): Recipe {
  return {
    label: `blobs, ${total.toLocaleString("en")} rows of ~50 KB`,
    schema: "CREATE TABLE blobs (id INTEGER PRIMARY KEY, name TEXT NOT NULL, data BLOB NOT NULL);",
    ...batched(total, 100, (first, count, batch) =>
      `${rows("blobs", batch, (first - 1) * BLOB_PIECES + 1, count * BLOB_PIECES)}
INSERT INTO blobs (id, name, data) SELECT id, 'file-' || id || '.bin', cast(group_concat(piece, '') AS blob) FROM
  (SELECT (i - 1) / ${BLOB_PIECES} + 1 AS id, ${codePoints(1, 480)} AS piece FROM seq ORDER BY i) GROUP BY id;`),
    rawSizeSql: rawSizeSqlOf({ blobs: ["id", "name", "data"] }),
  };
}

/** The recipe of a shape at the bench's scale (a tenth with --quick). */
export function recipeOf(shape: Exclude<Shape, "mixed">, quick: boolean): Recipe {
  const scale = quick ? 0.1 : 1;
  if (shape === "narrow") return narrowRecipe(2_000_000 * scale);
  if (shape === "wide") return wideRecipe(2000 * scale);
  return blobsRecipe(2000 * scale);
}
