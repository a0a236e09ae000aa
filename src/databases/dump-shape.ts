/**
 * What a dump reads of a database's shape: its own objects, each table's insertable columns and
 * the walk that pages through its rows, and the SQL that renders a row's values as literals.
 */

import { JOURNAL_PREFIX } from "./journal-plan";

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
export function keyExpressions(walk: Walk): string[] {
  if (walk.kind === "rowid") return [`quote(${walk.name})`];
  if (walk.kind === "key") return walk.columns.map((c) => `quote(${quoteIdent(c)})`);
  return [];
}

/** AUTOINCREMENT counters, set after the rows so the next id matches the source exactly. */
export function sequenceRows(sql: SqlStorage): string {
  // One row per AUTOINCREMENT table, so the whole list is small.
  const rows = sql.exec<{ v: string }>("SELECT quote(name)||','||quote(seq) AS v FROM sqlite_sequence").toArray();
  return `DELETE FROM sqlite_sequence;\n${rows.map((r) => `INSERT INTO sqlite_sequence VALUES(${r.v});\n`).join("")}`;
}
