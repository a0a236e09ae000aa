/**
 * The SQL text dump of one managed database, produced a bounded piece at a time so memory stays
 * flat whatever the database size. The text restores with `sqlite3 new.db < dump.sql`.
 *
 * Every value is rendered by SQLite itself, never by JavaScript: a JS number cannot hold a 64-bit
 * INTEGER. `quote()` prints INTEGERs, a BLOB as `X'..'` and TEXT with quotes doubled; a REAL gets
 * its digits in full, which round-trip bit for bit (see `literal`). SQLite also writes each row's
 * whole INSERT and hands it over as UTF-8 bytes (a BLOB): the rows never become JavaScript strings,
 * which would only be encoded again and left behind as garbage on the isolate's heap.
 */

import { utf8 } from "../lib/encoding";
import { type TablePlan, readJournalPlan } from "./journal-plan";
import { journalPage, livePage } from "./dump-pages";
import { DUMP_BATCH_ROWS, FIRST_BATCH_ROWS, type PageText, WHOLE_PAGE_BYTES, nextLimit, readRowByRow, readWholePage } from "./dump-reads";
import { keyExpressions, listObjects, quoteIdent, sequenceRows, type TableListRow, tableShape } from "./dump-shape";

/**
 * Where a dump stands: before table `table` (an index into the dump's table list) or inside it
 * after the row whose walk key is `after` (or after `offset` rows). `table` -1 is before the
 * schema; the table count is after the last row (the tail: AUTOINCREMENT counters, triggers,
 * COMMIT). A dump taken up again at a position carries on with exactly the text that follows it,
 * as long as nothing was written in between (the database's dump lease sees to that).
 */
export interface DumpPosition {
  table: number;
  after: string[] | null;
  offset: number;
  /** Rows the next page asks for (see nextLimit); absent: FIRST_BATCH_ROWS. */
  rows?: number;
}

/** The start of a dump. */
export const DUMP_START: DumpPosition = { table: -1, after: null, offset: 0 };

/** One piece of a dump's text as UTF-8, and where the dump stands after it (null: this was the last). */
export interface DumpText {
  bytes: Uint8Array<ArrayBuffer>;
  next: DumpPosition | null;
}

/**
 * Yields the dump as text pieces: tables, indexes and views, then every row as an INSERT, the
 * AUTOINCREMENT counters, and the triggers last, so that replaying the INSERTs fires no trigger
 * (a trigger created earlier would add or change rows on restore). All inside one transaction.
 * Starts at `from`, so a dump can be taken up again where an earlier piece ended.
 */
export function* dumpSql(sql: SqlStorage, from: DumpPosition = DUMP_START, reads: PageReads = "auto"): Generator<DumpText, void, undefined> {
  const { tables, kinds, ofType } = listObjects(sql);
  if (!fits(from, tables.length)) throw new Error("This dump position does not fit the database.");
  // Open under a snapshot journal (see snapshot-journal.ts): rows read as they were when it began.
  const plan = readJournalPlan(sql);

  if (from.table === -1) {
    const head = [...tables, ...ofType("index"), ...ofType("view")].map((o) => `${o.sql};\n`).join("");
    yield { bytes: utf8(`PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n${head}`), next: { table: 0, after: null, offset: 0 } };
  }
  for (let t = Math.max(0, from.table); t < tables.length; t++) {
    const start = t === from.table ? from : { table: t, after: null, offset: 0 };
    const name = tables[t]!.name;
    yield* tableRows(sql, name, kinds.get(name), start, plan?.tables.get(name), reads);
  }
  const counters = plan ? plan.sequence : kinds.has("sqlite_sequence") ? sequenceRows(sql) : "";
  yield { bytes: utf8(`${counters}${ofType("trigger").map((o) => `${o.sql};\n`).join("")}COMMIT;\n`), next: null };
}

/**
 * The INSERTs of one table from `start`, in bounded batches walked by rowid (or key, for WITHOUT
 * ROWID). Under a journal, a row's pre-image stands in for the row, and rows the snapshot did not
 * hold are left out (journal-plan.ts).
 */
function* tableRows(sql: SqlStorage, table: string, kind: TableListRow | undefined, start: DumpPosition, plan: TablePlan | undefined, reads: PageReads): Generator<DumpText> {
  const shape = tableShape(sql, table, kind);
  const { columns } = shape;
  if (columns.length === 0) return;
  // Bound as ?1 of the page's query, whose first column is each row's whole INSERT (insertOf).
  const prefix = `INSERT INTO ${quoteIdent(table)}(${columns.map(quoteIdent).join(",")}) VALUES(`;
  // A table whose writes are refused during the dump (journal-plan.ts) is read as it is.
  const journaled = plan && plan.mode !== "frozen" ? plan : undefined;
  const page = journaled ? journalPage(table, shape, journaled) : livePage(table, shape);
  const keyCount = journaled ? (journaled.mode === "copy" ? 1 : journaled.keys.length) : keyExpressions(shape.walk).length;

  let after = start.after;
  let offset = start.offset;
  let limit = start.rows ?? FIRST_BATCH_ROWS;
  // The first page of a table (and of a dump taken up again) is read row by row; once a page of
  // small rows has come back, the next one is read whole (readWholePage).
  let whole = false;
  for (;;) {
    const query = page(after, offset, limit);
    const read: PageText = (whole && readWholePage(sql, query, page.whole, prefix, keyCount)) || readRowByRow(sql, query, prefix, keyCount);
    const { bytes, rows, full } = read;
    if (read.after) after = read.after;
    offset += rows;
    const more = full || rows === limit;
    limit = nextLimit(limit, rows, full, bytes.byteLength);
    whole = reads === "auto" && !full && bytes.byteLength <= WHOLE_PAGE_BYTES;
    if (rows > 0) yield { bytes, next: { table: start.table, after, offset, rows: limit } };
    if (!more) return;
  }
}

/** How pages are read: `auto` (row by row, or whole once rows are known to be small) or always `rows` (the reference). */
export type PageReads = "auto" | "rows";

/** A SQL literal as quote() prints it: a position's walk key, bound into the next page's query and read back by boundLiteral. */
const QUOTED_LITERAL = /^(NULL|-?\d+(\.\d+)?(e[+-]\d+)?|'([^']|'')*'|X'[0-9A-F]*')$/;

/** Whether `position` can be a position in a dump of `tables` tables, its key made of quote() literals. */
function fits(position: DumpPosition, tables: number): boolean {
  const { table, after, offset, rows } = position;
  return (
    Number.isSafeInteger(table) && table >= -1 && table <= tables && Number.isSafeInteger(offset) && offset >= 0 &&
    (rows === undefined || (Number.isSafeInteger(rows) && rows >= 1 && rows <= DUMP_BATCH_ROWS)) &&
    (after === null || (Array.isArray(after) && after.every((v) => typeof v === "string" && QUOTED_LITERAL.test(v))))
  );
}
