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
import { release } from "../lib/release";
import { JOURNAL_PREFIX, readJournalPlan, type TablePlan } from "./journal-plan";

/** Rows asked for per query at most; a batch also stops early at DUMP_CHUNK_BYTES. */
export const DUMP_BATCH_ROWS = 500;
/**
 * The size a page of rows is aimed at (nextLimit): its row count follows the size of the rows
 * read so far, so a page of small rows comes back whole (under WHOLE_PAGE_BYTES) with room for
 * rows half again as large, whatever the rows' size. Before, a page asked for 32 rows, then twice
 * as many while pages stayed under half a chunk, and was read whole only after a page of 96 KiB or
 * less: large rows (the bench's documents) came 32 to a page of about 96 KiB, and a page over it
 * sent the next one row by row. Those reads allocated 32 MB of the isolate's heap over a 200 MB
 * export; now they do not show (`scripts/bench/profile-allocations.ts`). Pages of up to 2,000
 * narrow rows were no faster than 500 (the same MB/s within the noise, two runs of three each).
 */
export const PAGE_TARGET_BYTES = 64 * 1024;
/**
 * A chunk holds at most this many bytes of SQL, unless one row alone is longer: it ends at the row
 * that fills it, or before a row that would take it past.
 */
export const DUMP_CHUNK_BYTES = 120 * 1024;
/**
 * A page is read whole (readWholePage) when the page before it came to at most this many bytes
 * and did not fill a chunk: the next one is aimed at PAGE_TARGET_BYTES, and one that does not fit a
 * chunk is read again row by row. A row read alone costs the isolate a row array, a buffer and a
 * key array: row-by-row reads made 106 MB of the 165 MB a 200 MB export allocated on the JS heap
 * when pages were read whole only under half a chunk (`npx tsx scripts/bench/profile-allocations.ts`).
 */
export const WHOLE_PAGE_BYTES = 96 * 1024;

interface SchemaRow {
  type: "table" | "index" | "view" | "trigger";
  name: string;
  sql: string;
  [key: string]: SqlStorageValue;
}

export interface TableListRow {
  schema: string;
  name: string;
  /** `table`, `view`, `virtual` or `shadow`. */
  type: string;
  /** 1 for a WITHOUT ROWID table. */
  wr: number;
  [key: string]: SqlStorageValue;
}

export interface ColumnInfo {
  name: string;
  pk: number;
  hidden: number;
  [key: string]: SqlStorageValue;
}

/** How a table is walked in order: by its rowid (under whatever name is free), by its key, or by offset. */
export type Walk = { kind: "rowid"; name: string } | { kind: "key"; columns: string[] } | { kind: "offset" };

/** A double-quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Objects the platform owns: SQLite's own (`sqlite_*`, any case), the runtime's (`_cf_*`), and the
 * table in which the local runtime (Miniflare, under `wrangler dev`) records the object's name.
 */
const USER_OBJECT = `lower(name) NOT GLOB 'sqlite_*' AND name NOT GLOB '_cf_*' AND name != '__miniflare_do_name'
  AND lower(tbl_name) NOT GLOB 'sqlite_*' AND tbl_name NOT GLOB '_cf_*' AND tbl_name != '__miniflare_do_name'
  AND lower(name) NOT GLOB '${JOURNAL_PREFIX}*' AND lower(tbl_name) NOT GLOB '${JOURNAL_PREFIX}*'`;

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

/** The database's own objects in creation order, and each table's kind (PRAGMA table_list). */
export function listObjects(sql: SqlStorage) {
  const schema = sql
    .exec<SchemaRow>(`SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND ${USER_OBJECT} ORDER BY rowid`)
    .toArray();
  const kinds = new Map(
    sql
      .exec<TableListRow>("PRAGMA table_list")
      .toArray()
      .filter((t) => t.schema === "main")
      .map((t) => [t.name, t]),
  );
  // Shadow tables hold a virtual table's internals; CREATE VIRTUAL TABLE makes them again.
  const ofType = (type: SchemaRow["type"]) => schema.filter((o) => o.type === type && kinds.get(o.name)?.type !== "shadow");
  return { tables: ofType("table"), kinds, ofType };
}

/** How one table's rows are dumped: its insertable columns, the walk, and the SQL rendering a row. */
export interface TableShape {
  info: ColumnInfo[];
  columns: string[];
  walk: Walk;
  /** The row's values as a literal list, from column expressions named by `ref` (default: the bare column). */
  values: (ref?: (column: string) => string) => string;
}

export function tableShape(sql: SqlStorage, table: string, kind: TableListRow | undefined): TableShape {
  const info = sql.exec<ColumnInfo>(`PRAGMA table_xinfo(${quoteIdent(table)})`).toArray();
  // Generated columns (hidden 2 and 3) cannot be inserted; hidden virtual-table columns are not data.
  const columns = info.filter((c) => c.hidden === 0).map((c) => c.name);
  const walk = chooseWalk(info, kind?.wr !== 1);
  const values = (ref: (column: string) => string = quoteIdent) => columns.map((c) => literal(ref(c))).join("||','||");
  return { info, columns, walk, values };
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

/** What one page gave: its INSERTs, how many rows they hold, the last one's walk key, and whether it filled a chunk. */
interface PageText {
  bytes: Uint8Array<ArrayBuffer>;
  rows: number;
  after: string[] | null;
  full: boolean;
}

/** Each row's whole INSERT, as SQL of the row's literal list: the prefix is bound as ?1. */
function insertOf(literals: string): string {
  return `CAST(?1 || ${literals} || ');' || char(10) AS BLOB)`;
}

/**
 * One page read a row at a time: the chunk ends at the row that fills it, or before a row that
 * would take it past DUMP_CHUNK_BYTES (a row alone may exceed it). The rest of a full page
 * is read through, not left: an unfinished statement would keep SQLite from dropping the snapshot
 * journal's tables when the dump ends.
 */
function readRowByRow(sql: SqlStorage, query: PageQuery, prefix: string, keyCount: number): PageText {
  const inserts: Uint8Array<ArrayBuffer>[] = [];
  let size = 0;
  let full = false;
  let after: string[] | null = null;
  for (const row of sql.exec(query.sql, prefix, ...query.params).raw()) {
    const insert = new Uint8Array(row[0] as ArrayBuffer);
    if (full || (size > 0 && size + insert.byteLength > DUMP_CHUNK_BYTES)) {
      full = true;
      release(insert.buffer);
      continue;
    }
    inserts.push(insert);
    size += insert.byteLength;
    after = row.slice(1, 1 + keyCount) as string[];
    full = size >= DUMP_CHUNK_BYTES;
  }
  return { bytes: joinBytes(inserts, size), rows: inserts.length, after, full };
}

/**
 * One page read in a single step: SQLite joins the page's INSERTs (and, NUL-separated, their walk
 * keys), so a page of small rows crosses into JavaScript once instead of once per row. No key
 * holds a NUL (quote() ends TEXT at its first NUL; numbers and hex have none). Null when the page
 * would take the chunk past DUMP_CHUNK_BYTES: it is then read row by row, which cuts the chunk, so
 * both ways give the very same text and positions.
 */
function readWholePage(sql: SqlStorage, query: PageQuery, whole: (text: string) => string, prefix: string, keyCount: number): PageText | null {
  const [joined, keyList, count] = sql
    .exec(whole(query.sql), prefix, ...query.params)
    .raw()
    .next().value as [ArrayBuffer | null, string | null, number];
  if (count === 0) return { bytes: new Uint8Array(0), rows: 0, after: null, full: false };
  if (joined!.byteLength > DUMP_CHUNK_BYTES) {
    release(joined!);
    return null;
  }
  return { bytes: new Uint8Array(joined!), rows: count, after: lastKey(keyList!, keyCount), full: joined!.byteLength >= DUMP_CHUNK_BYTES };
}

/** The last `keyCount` parts of NUL-separated `list`: the page's last row's walk key. */
function lastKey(list: string, keyCount: number): string[] {
  if (keyCount === 0) return [];
  let at = list.length;
  for (let i = 0; i < keyCount; i++) at = list.lastIndexOf("\0", at - 1);
  return list.slice(at + 1).split("\0");
}

/** `parts` (holding `size` bytes in all) as one buffer; each part's own buffer is freed once copied. */
function joinBytes(parts: Uint8Array<ArrayBuffer>[], size: number): Uint8Array<ArrayBuffer> {
  if (parts.length === 1) return parts[0]!;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
    release(part.buffer);
  }
  return bytes;
}

/** Rows the first page of a table asks for; later pages follow the size of its rows (nextLimit). */
export const FIRST_BATCH_ROWS = 32;

/**
 * The next page's row count. After a page that filled a chunk, what fit (so the next one reads
 * through few rows it cannot take). After a page that brought all the rows it asked for, as many
 * rows as come to PAGE_TARGET_BYTES at that page's size per row: at most twice as many as it
 * asked for, never more than DUMP_BATCH_ROWS, at least one. It travels in the position, so a dump
 * taken up again pages the same way.
 */
export function nextLimit(limit: number, rows: number, full: boolean, bytes: number): number {
  if (full) return Math.max(1, rows);
  if (rows < limit) return limit;
  const fit = Math.floor((rows * PAGE_TARGET_BYTES) / Math.max(1, bytes));
  return Math.max(1, Math.min(DUMP_BATCH_ROWS, limit * 2, fit));
}

/**
 * A page's query: the same SQL text on every page of a table (the runtime keeps one prepared
 * statement per text), with the page's LIMIT, OFFSET and walk key bound (?2 on; ?1 is the INSERT prefix).
 */
/**
 * A page's LIMIT, bound as ?2 but written as an expression. SQLite's planner reads a LIMIT that is
 * a bare parameter (`LIMIT ?2`) and marks the statement to be compiled again whenever that
 * parameter is bound; the runtime clears a statement's bindings after every query, so each page's
 * query was compiled anew before it ran: three quarters of the time of a 10-row page's query in a
 * Durable Object under workerd (`perf`: `sqlite3Reprepare` under `sqlite3_step`), and 7.7 % of
 * an export of 2,000,000 narrow rows. As an expression the LIMIT is read as the statement runs,
 * and the statement prepared once is kept. The same goes for OFFSET (?3).
 */
const PAGE_LIMIT = "LIMIT CAST(?2 AS INTEGER)";
const PAGE_OFFSET = "OFFSET CAST(?3 AS INTEGER)";

interface PageQuery {
  sql: string;
  params: (string | number)[];
}

/** A table's pages (each row's INSERT as bytes, then the walk key as literals, then anything else); `whole` wraps a page's SQL for readWholePage. */
type Page = ((after: string[] | null, offset: number, limit: number) => PageQuery) & { whole: (text: string) => string };

/** `page` with the SQL that reads one of its pages whole: SQLite joins the INSERTs and, NUL-separated, the walk keys of its `keyCount` columns. */
function paged(page: (after: string[] | null, offset: number, limit: number) => PageQuery, width: number, keyCount: number): Page {
  const names = Array.from({ length: width }, (_, i) => `c${i}`);
  const keys = keyCount === 0 ? "''" : names.slice(1, 1 + keyCount).join("||char(0)||");
  const texts = new Map<string, string>();
  const whole = (text: string) => {
    let wrapped = texts.get(text);
    if (wrapped === undefined) {
      wrapped = `WITH page(${names.join(",")}) AS (${text}) SELECT CAST(group_concat(c0, '') AS BLOB), group_concat(${keys}, char(0)), count(*) FROM page`;
      texts.set(text, wrapped);
    }
    return wrapped;
  };
  return Object.assign(page, { whole });
}

/**
 * SQL for the value of the quote() literal bound as ?n (NULL, an integer, a REAL, 'text' or
 * X'hex'): the value the literal written into the query would have. CASE gives it no affinity,
 * as a literal has none, so comparisons with a column go exactly as with the literal inline.
 */
export function boundLiteral(n: number): string {
  const p = `?${n}`;
  return (
    `(CASE WHEN ${p} = 'NULL' THEN NULL` +
    ` WHEN substr(${p}, 1, 1) = '''' THEN replace(substr(${p}, 2, length(${p}) - 2), '''''', '''')` +
    ` WHEN substr(${p}, 1, 2) = 'X''' THEN unhex(substr(${p}, 3, length(${p}) - 3))` +
    ` WHEN ${p} GLOB '*[.e]*' THEN CAST(${p} AS REAL) ELSE CAST(${p} AS INTEGER) END)`
  );
}

/** Bound literals ?first, ?first+1, ... for the `count` parts of a walk key. */
const boundKey = (first: number, count: number) => Array.from({ length: count }, (_, i) => boundLiteral(first + i));

/** A page of the table as it is now. */
function livePage(table: string, shape: TableShape): Page {
  const { walk } = shape;
  const keys = keyExpressions(walk);
  // No aliases: an alias would shadow a column of the same name in ORDER BY and WHERE.
  const select = `SELECT ${[insertOf(shape.values()), ...keys].join(", ")} FROM ${quoteIdent(table)}`;
  if (walk.kind === "offset") {
    const text = `${select} ${PAGE_LIMIT} ${PAGE_OFFSET}`;
    return paged((_after, offset, limit) => ({ sql: text, params: [limit, offset] }), 1, 0);
  }
  const order = (walk.kind === "rowid" ? [walk.name] : walk.columns.map(quoteIdent)).join(",");
  const first = `${select} ORDER BY ${order} ${PAGE_LIMIT}`;
  const next = `${select} WHERE (${order}) > (${boundKey(3, keys.length).join(",")}) ORDER BY ${order} ${PAGE_LIMIT}`;
  return paged((after, _offset, limit) => (after ? { sql: next, params: [limit, ...after] } : { sql: first, params: [limit] }), 1 + keys.length, keys.length);
}

/**
 * A page of the table as it was when the journal began: live rows the journal does not know,
 * merged in key order with the journal's pre-images; markers (a NULL image) and, for a rowid
 * table, rowids above the snapshot's largest are rows written since, left out.
 */
function journalPage(table: string, shape: TableShape, plan: TablePlan): Page {
  const j = quoteIdent(plan.journal);
  if (plan.mode === "copy") {
    // A virtual table was copied whole into its journal when the dump began.
    const head = `SELECT ${insertOf("image")}, quote(k) FROM ${j}`;
    const first = `${head} ORDER BY k ${PAGE_LIMIT}`;
    const next = `${head} WHERE k > ${boundLiteral(3)} ORDER BY k ${PAGE_LIMIT}`;
    return paged((after, _offset, limit) => (after ? { sql: next, params: [limit, after[0]!] } : { sql: first, params: [limit] }), 2, 1);
  }
  const t = quoteIdent(table);
  const keys = plan.keys;
  const k = keys.map((_, i) => `k${i}`);
  // The rowid's names (rowid, _rowid_, oid) are left bare: SQLite knows them only so.
  const live = keys.map((c) => `${t}.${plan.mode === "rowid" ? c : quoteIdent(c)}`);
  const after = boundKey(3, keys.length);
  const range = (cols: string[], from: boolean) => {
    const parts = from ? [`(${cols.join(",")}) > (${after.join(",")})`] : [];
    if (plan.mode === "rowid") parts.push(`${cols[0]} <= ${plan.maxRowid ?? "NULL"}`);
    return parts;
  };
  const known = `NOT EXISTS (SELECT 1 FROM ${j} WHERE ${k.map((name, i) => `${j}.${name} = ${live[i]}`).join(" AND ")})`;
  const order = k.map((_, i) => String(2 + keys.length + i)).join(",");
  // One compound SELECT ordered by the raw keys (the columns after v and the quoted keys): SQLite
  // merges the two arms, each walked in key order, so a page costs the same wherever it starts.
  const liveArm = `SELECT ${insertOf(shape.values((c) => `${t}.${quoteIdent(c)}`))}, ${live.map((c) => `quote(${c})`).join(", ")}, ${live.join(", ")} FROM ${t} WHERE`;
  const journalArm = `SELECT ${insertOf("image")}, ${k.map((name) => `quote(${name})`).join(", ")}, ${k.join(", ")} FROM ${j} WHERE`;
  const text = (from: boolean) =>
    `${liveArm} ${[...range(live, from), known].join(" AND ")}
     UNION ALL ${journalArm} ${[...range(k, from), "image IS NOT NULL"].join(" AND ")}
     ORDER BY ${order} ${PAGE_LIMIT}`;
  const first = text(false);
  const next = text(true);
  return paged((from, _offset, limit) => (from ? { sql: next, params: [limit, ...from] } : { sql: first, params: [limit] }), 1 + 2 * keys.length, keys.length);
}

/**
 * SQL that renders column `c` of a row as a literal. A finite REAL gets its digits in full
 * (`printf('%!.20e')`, 18 significant digits), not quote()'s shortest form: both are exact, but
 * older sqlite3 releases (3.40, Debian 12's) parse some shortest forms one unit in the last place
 * off, e.g. `5822.3216635279` (found by the 1 GB benchmark), while the full digits lie far from
 * any rounding boundary. Everything else, zeros (keeping -0.0) and the infinities go through quote().
 */
export function literal(c: string): string {
  return `CASE WHEN typeof(${c}) = 'real' AND ${c} != 0 AND abs(${c}) <= 1.7976931348623157e308 THEN printf('%!.20e', ${c}) ELSE quote(${c}) END`;
}

/** The rowid under a name no column has taken; else the primary key; else plain offsets. */
export function chooseWalk(info: ColumnInfo[], hasRowid: boolean): Walk {
  const taken = new Set(info.map((c) => c.name.toLowerCase()));
  if (hasRowid) {
    const name = ["rowid", "_rowid_", "oid"].find((n) => !taken.has(n));
    return name ? { kind: "rowid", name } : { kind: "offset" };
  }
  const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
  return { kind: "key", columns: pk.map((c) => c.name) };
}

/** The walk's key as exact SQL literals, so the next page starts strictly after the last row. */
function keyExpressions(walk: Walk): string[] {
  if (walk.kind === "rowid") return [`quote(${walk.name})`];
  if (walk.kind === "key") return walk.columns.map((c) => `quote(${quoteIdent(c)})`);
  return [];
}

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

/** AUTOINCREMENT counters, set after the rows so the next id matches the source exactly. */
export function sequenceRows(sql: SqlStorage): string {
  // One row per AUTOINCREMENT table, so the whole list is small.
  const rows = sql.exec<{ v: string }>("SELECT quote(name)||','||quote(seq) AS v FROM sqlite_sequence").toArray();
  return `DELETE FROM sqlite_sequence;\n${rows.map((r) => `INSERT INTO sqlite_sequence VALUES(${r.v});\n`).join("")}`;
}

/**
 * One read of an open dump returns about this many bytes of SQL (one row may exceed it). The
 * database's SQL calls run between reads, so a read is kept short: it is as long as a call may
 * have to wait during an export. The export's gzip takes a turn of the event loop after each read
 * (gzip.ts), a timer, which costs about 1.4 ms here under `wrangler dev`: 128 KiB reads spent about
 * a tenth of a 50 MB export's time in those waits (`npm run bench -- --no-requests --sizes 50MB`:
 * 0.88 of the native pipeline with 128 KiB, 0.97 with 256 KiB; the start request during the
 * export answered in 47 and 59 ms, SQL calls within 261 and 231 ms at p99).
 */
export const DUMP_READ_BYTES = 256 * 1024;

/** Why a dump ended: read to the end, failed reading, closed by its reader, or left unread. */
export type DumpEnd = "end" | "error" | "closed" | "idle";

/** How a DumpCursor reports its end and guards against a reader that went away. */
export interface DumpCursorOptions {
  /** Runs once, when the dump has been read to its end, fails, is closed or goes idle. */
  onDone?: (why: DumpEnd) => void;
  /** The dump fails when nobody reads it for this long. */
  idleTimeoutMs?: number;
  /** Where to start: a position an earlier piece ended at (default: the start). */
  from?: DumpPosition;
}

/** One read of a dump: about DUMP_READ_BYTES of SQL as UTF-8, and where the dump stands after it (null: the end). */
export interface DumpPiece {
  bytes: Uint8Array;
  next: DumpPosition | null;
}

/**
 * An open dump, read one bounded piece per call: nothing is produced until the reader asks, so a
 * slow reader (gzip, an upload) never makes the database object buffer the dump. The object hands
 * out these pieces over RPC one call at a time; see dump-stream.ts for the reading side.
 */
export class DumpCursor {
  readonly #pieces: Generator<DumpText, void, undefined>;
  readonly #options: DumpCursorOptions;
  /** The last piece handed out: the reader has it by the time it asks again (see read). */
  #handedOut: Uint8Array | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #ended = false;
  #failure: Error | undefined;

  constructor(sql: SqlStorage, options: DumpCursorOptions = {}) {
    this.#pieces = dumpSql(sql, options.from);
    this.#options = options;
    this.#arm();
  }

  /** The next piece, about DUMP_READ_BYTES long; null once the dump has all been read. */
  read(): DumpPiece | null {
    // The reader asks for one piece at a time (dump-stream.ts), so the last one has been sent over
    // RPC, copied, by now: its buffer is freed here rather than at some later collection.
    this.#releaseHandedOut();
    if (this.#failure) throw this.#failure;
    if (this.#ended) return null;
    const parts: Uint8Array<ArrayBuffer>[] = [];
    let size = 0;
    let next: DumpPosition | null = null;
    try {
      while (size < DUMP_READ_BYTES) {
        const piece = this.#pieces.next();
        if (piece.done) {
          this.#finish("end");
          break;
        }
        parts.push(piece.value.bytes);
        size += piece.value.bytes.byteLength;
        next = piece.value.next;
      }
    } catch (err) {
      this.#finish("error");
      throw err;
    }
    if (!this.#ended) this.#arm();
    if (parts.length === 0 && this.#ended) return null;
    this.#handedOut = joinBytes(parts, size);
    return { bytes: this.#handedOut, next };
  }

  #releaseHandedOut(): void {
    if (this.#handedOut) release(this.#handedOut.buffer);
    this.#handedOut = undefined;
  }

  /** Ends the dump early (the reader cancelled); safe to call more than once. */
  close(): void {
    if (this.#finish("closed")) {
      this.#pieces.return();
      this.#failure = new Error("The dump was closed.");
    }
  }

  #arm(): void {
    const { idleTimeoutMs } = this.#options;
    if (idleTimeoutMs === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      if (this.#finish("idle")) {
        this.#pieces.return();
        this.#failure = new Error(`The dump reader was idle for ${idleTimeoutMs} ms.`);
      }
    }, idleTimeoutMs);
  }

  #finish(why: DumpEnd): boolean {
    clearTimeout(this.#timer);
    if (this.#ended) return false;
    this.#ended = true;
    this.#options.onDone?.(why);
    return true;
  }
}
