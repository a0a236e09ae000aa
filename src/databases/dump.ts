/**
 * The SQL text dump of one managed database, produced a bounded piece at a time so memory stays
 * flat whatever the database size. The text restores with `sqlite3 new.db < dump.sql`.
 *
 * Every value is rendered by SQLite's own `quote()`, never by JavaScript: a JS number cannot
 * hold a 64-bit INTEGER, and `quote()` prints a REAL with enough digits to round-trip bit for bit
 * (`%!.15g`, falling back to 17 significant digits), a BLOB as `X'..'` and TEXT with quotes doubled.
 */

/** Rows asked for per query; a batch also stops early at DUMP_CHUNK_CHARS. */
export const DUMP_BATCH_ROWS = 500;
/** A chunk is handed on once it holds about this many characters (one row may exceed it). */
export const DUMP_CHUNK_CHARS = 256 * 1024;

interface SchemaRow {
  type: "table" | "index" | "view" | "trigger";
  name: string;
  sql: string;
  [key: string]: SqlStorageValue;
}

interface TableListRow {
  schema: string;
  name: string;
  /** `table`, `view`, `virtual` or `shadow`. */
  type: string;
  /** 1 for a WITHOUT ROWID table. */
  wr: number;
  [key: string]: SqlStorageValue;
}

interface ColumnInfo {
  name: string;
  pk: number;
  hidden: number;
  [key: string]: SqlStorageValue;
}

/** How a table is walked in order: by its rowid (under whatever name is free), by its key, or by offset. */
type Walk = { kind: "rowid"; name: string } | { kind: "key"; columns: string[] } | { kind: "offset" };

/** A double-quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Objects the platform owns: SQLite's own (`sqlite_*`, any case), the runtime's (`_cf_*`), and the
 * table in which the local runtime (Miniflare, under `wrangler dev`) records the object's name.
 */
const USER_OBJECT = `lower(name) NOT GLOB 'sqlite_*' AND name NOT GLOB '_cf_*' AND name != '__miniflare_do_name'
  AND lower(tbl_name) NOT GLOB 'sqlite_*' AND tbl_name NOT GLOB '_cf_*' AND tbl_name != '__miniflare_do_name'`;

/**
 * Yields the dump as text pieces: tables, indexes and views, then every row as an INSERT, the
 * AUTOINCREMENT counters, and the triggers last, so that replaying the INSERTs fires no trigger
 * (a trigger created earlier would add or change rows on restore). All inside one transaction.
 */
export function* dumpSql(sql: SqlStorage): Generator<string, void, undefined> {
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
  const tables = ofType("table");

  yield "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n";
  yield [...tables, ...ofType("index"), ...ofType("view")].map((o) => `${o.sql};\n`).join("");
  for (const table of tables) yield* tableRows(sql, table.name, kinds.get(table.name));
  if (kinds.has("sqlite_sequence")) yield sequenceRows(sql);
  yield ofType("trigger").map((o) => `${o.sql};\n`).join("");
  yield "COMMIT;\n";
}

/** The INSERTs of one table, in bounded batches walked by rowid (or key, for WITHOUT ROWID). */
function* tableRows(sql: SqlStorage, table: string, kind: TableListRow | undefined): Generator<string> {
  const info = sql.exec<ColumnInfo>(`PRAGMA table_xinfo(${quoteIdent(table)})`).toArray();
  // Generated columns (hidden 2 and 3) cannot be inserted; hidden virtual-table columns are not data.
  const columns = info.filter((c) => c.hidden === 0).map((c) => c.name);
  if (columns.length === 0) return;
  const walk = chooseWalk(info, kind?.wr !== 1);
  const prefix = `INSERT INTO ${quoteIdent(table)}(${columns.map(quoteIdent).join(",")}) VALUES(`;
  const values = columns.map((c) => `quote(${quoteIdent(c)})`).join("||','||");
  const keys = keyExpressions(walk);
  // No aliases: an alias would shadow a column of the same name in ORDER BY and WHERE.
  const select = `SELECT ${[values, ...keys].join(", ")} FROM ${quoteIdent(table)}`;

  let after: string[] | null = null;
  let offset = 0;
  for (;;) {
    const query: string = pageQuery(select, walk, after, offset);
    let text = "";
    let rows = 0;
    for (const row of sql.exec(query).raw()) {
      text += `${prefix}${row[0] as string});\n`;
      rows++;
      after = row.slice(1) as string[];
      if (text.length >= DUMP_CHUNK_CHARS) break;
    }
    offset += rows;
    if (rows > 0) yield text;
    if (rows === 0 || (rows < DUMP_BATCH_ROWS && text.length < DUMP_CHUNK_CHARS)) return;
  }
}

/** The rowid under a name no column has taken; else the primary key; else plain offsets. */
function chooseWalk(info: ColumnInfo[], hasRowid: boolean): Walk {
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

function pageQuery(select: string, walk: Walk, after: string[] | null, offset: number): string {
  if (walk.kind === "offset") return `${select} LIMIT ${DUMP_BATCH_ROWS} OFFSET ${offset}`;
  const order = walk.kind === "rowid" ? [walk.name] : walk.columns.map(quoteIdent);
  // `after` holds quote() output, which is a literal SQLite itself produced, so it is safe to inline.
  const where = after ? ` WHERE (${order.join(",")}) > (${after.join(",")})` : "";
  return `${select}${where} ORDER BY ${order.join(",")} LIMIT ${DUMP_BATCH_ROWS}`;
}

/** AUTOINCREMENT counters, set after the rows so the next id matches the source exactly. */
function sequenceRows(sql: SqlStorage): string {
  // One row per AUTOINCREMENT table, so the whole list is small.
  const rows = sql.exec<{ v: string }>("SELECT quote(name)||','||quote(seq) AS v FROM sqlite_sequence").toArray();
  return `DELETE FROM sqlite_sequence;\n${rows.map((r) => `INSERT INTO sqlite_sequence VALUES(${r.v});\n`).join("")}`;
}

/** How dumpStream reports its end and guards against a reader that went away. */
export interface DumpStreamOptions {
  /** Runs once, when the stream ends, fails, is cancelled or goes idle. */
  onDone?: () => void;
  /** The stream fails when nobody reads it for this long. */
  idleTimeoutMs?: number;
}

/**
 * The dump as a byte stream that produces the next piece only when the reader asks for it, so a
 * slow reader never makes the object buffer the database.
 */
export function dumpStream(sql: SqlStorage, options: DumpStreamOptions = {}): ReadableStream<Uint8Array> {
  const pieces = dumpSql(sql);
  const encoder = new TextEncoder();
  let done = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const finish = () => {
    clearTimeout(timer);
    if (done) return false;
    done = true;
    options.onDone?.();
    return true;
  };
  const arm = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (options.idleTimeoutMs === undefined) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (finish()) {
        pieces.return();
        controller.error(new Error(`The dump reader was idle for ${options.idleTimeoutMs} ms.`));
      }
    }, options.idleTimeoutMs);
  };
  return new ReadableStream<Uint8Array>(
    {
      start: arm,
      pull(controller) {
        if (done) return;
        try {
          for (;;) {
            const next = pieces.next();
            if (next.done) {
              finish();
              controller.close();
              return;
            }
            if (next.value !== "") {
              controller.enqueue(encoder.encode(next.value));
              arm(controller);
              return;
            }
          }
        } catch (err) {
          finish();
          controller.error(err);
        }
      },
      cancel() {
        if (finish()) pieces.return();
      },
    },
    { highWaterMark: 0 },
  );
}
