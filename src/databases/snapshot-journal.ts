/**
 * A snapshot journal keeps a dump one consistent snapshot while the database goes on taking
 * writes. When the dump begins, the object creates, in its own SQLite storage, one journal table
 * per dumped table and triggers on that table; until the dump ends, every change to a row the
 * snapshot held first copies the row's old version (its pre-image, rendered as the dump renders
 * rows, so it is exact for every storage class) into the journal, once: only the first copy is
 * kept, and it is the row as the snapshot held it. A key the snapshot did not hold that a write
 * fills gets a marker (a NULL image). The dump (dump.ts) then reads each table in key
 * order, taking the pre-image where there is one and leaving markers out.
 *
 * Why triggers: customers run arbitrary SQL, their own triggers and foreign-key actions change
 * rows too, and only SQLite sees every row a statement touches. Durable Object storage refuses
 * TEMP triggers, so these are ordinary triggers, named with JOURNAL_PREFIX, dropped with the
 * journal and left out of every dump. Two kinds of change fire no row trigger and are covered
 * otherwise: rows that REPLACE deletes to make room (SQLite fires delete triggers for them only
 * under recursive_triggers, which would change the customer's own triggers), so the BEFORE INSERT
 * and BEFORE UPDATE triggers copy every row the new values would collide with on the rowid or any
 * UNIQUE index; and schema changes, which the object refuses while a journal is open.
 */
import { type ColumnInfo, listObjects, quoteIdent, sequenceRows, type TableListRow, type TableShape, tableShape } from "./dump-shape";
import { JOURNAL_PREFIX, PLAN_TABLE, STATE_TABLE, type TablePlan } from "./journal-plan";

/** Bytes a journal entry counts for besides its image: its key and the table's own overhead, roughly. */
const ENTRY_OVERHEAD_BYTES = 64;

/** Why the object refuses a write to a table whose snapshot cannot be kept row by row. */
export const FROZEN_TABLE_MESSAGE =
  "This table cannot be changed while an export of the database is running: it has no row key the export can follow. Try again when the export has finished.";

/** Thrown when keeping the snapshot would take more than the journal's bound. */
export class JournalFull extends Error {
  override readonly name = "JournalFull";
}

/** The sentence an export fails with when its journal outgrew its bound. */
export function journalFullMessage(maxBytes: number): string {
  return `${JOURNAL_FULL_START}: keeping the export's snapshot needed more than ${maxBytes} bytes of earlier row versions (EXPORT_JOURNAL_MAX_BYTES). Start the export again when fewer writes are running.`;
}

/** Whether an export failed because its journal outgrew its bound (trying again cannot help). */
export function isJournalFull(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith(JOURNAL_FULL_START);
}
const JOURNAL_FULL_START = "The database changed too much while it was being exported";

/**
 * Begins a journal: the snapshot is the database as it is now. Run inside one transaction. Throws
 * JournalFull when copying the virtual tables already takes more than `maxBytes`.
 */
export function openJournal(sql: SqlStorage, maxBytes: number): void {
  dropJournal(sql);
  const { tables, kinds } = listObjects(sql);
  sql.exec(`CREATE TABLE ${STATE_TABLE} (bytes INTEGER NOT NULL, max_bytes INTEGER NOT NULL, sequence TEXT NOT NULL)`);
  sql.exec(`INSERT INTO ${STATE_TABLE} VALUES (0, ?, ?)`, maxBytes, kinds.has("sqlite_sequence") ? sequenceRows(sql) : "");
  sql.exec(`CREATE TABLE ${PLAN_TABLE} (name TEXT PRIMARY KEY, plan TEXT NOT NULL)`);
  tables.forEach((table, n) => {
    const plan = keepTable(sql, table.name, kinds.get(table.name), n);
    sql.exec(`INSERT INTO ${PLAN_TABLE} VALUES (?, ?)`, table.name, JSON.stringify(plan));
  });
  if (journalOverflow(sql)) throw new JournalFull(journalFullMessage(maxBytes));
}

/** Drops every object of the journal (its triggers go with it): writes cost nothing extra again. */
export function dropJournal(sql: SqlStorage): void {
  const objects = sql
    .exec<{ type: string; name: string }>(`SELECT type, name FROM sqlite_schema WHERE name GLOB '${JOURNAL_PREFIX}*' AND type IN ('table', 'trigger') ORDER BY type = 'table'`)
    .toArray();
  for (const o of objects) sql.exec(`DROP ${o.type === "table" ? "TABLE" : "TRIGGER"} IF EXISTS ${quoteIdent(o.name)}`);
}

/** Whether the journal has outgrown its bound (its triggers stopped copying: the snapshot is lost). */
export function journalOverflow(sql: SqlStorage): { bytes: number; maxBytes: number } | null {
  const row = sql.exec<{ bytes: number; max_bytes: number }>(`SELECT bytes, max_bytes FROM ${STATE_TABLE}`).toArray()[0];
  return row && row.bytes > row.max_bytes ? { bytes: row.bytes, maxBytes: row.max_bytes } : null;
}

/** Creates table `table`'s journal and triggers; returns its plan. */
function keepTable(sql: SqlStorage, table: string, kind: TableListRow | undefined, n: number): TablePlan {
  const shape = tableShape(sql, table, kind);
  const journal = `${JOURNAL_PREFIX}j${n}`;
  if (kind?.type === "virtual") return copyTable(sql, table, shape, journal);

  const uniques = uniqueIndexes(sql, table);
  if (shape.walk.kind === "offset" || uniques === null) {
    // No key to journal by (or a UNIQUE index on an expression, whose collisions a trigger cannot
    // look up): writes to the table wait for no one but are refused until the dump ends.
    freezeTable(sql, table, n);
    return { mode: "frozen", journal, keys: [], collations: [], maxRowid: null };
  }

  const rowid = shape.walk.kind === "rowid";
  const keys = shape.walk.kind === "rowid" ? [shape.walk.name] : shape.walk.columns;
  const plan = createKeyedJournal(sql, table, shape.info, journal, keys, rowid);
  createCopyTriggers(sql, table, n, shape, plan, uniques);
  return plan;
}

/** A virtual table (SQLite allows no trigger on it) is copied whole into its journal at once. */
function copyTable(sql: SqlStorage, table: string, shape: TableShape, journal: string): TablePlan {
  const j = quoteIdent(journal);
  sql.exec(`CREATE TABLE ${j} (k INTEGER PRIMARY KEY, image TEXT)`);
  countEntries(sql, journal);
  if (shape.columns.length > 0) sql.exec(`INSERT INTO ${j} (image) SELECT ${shape.values()} FROM ${quoteIdent(table)}`);
  return { mode: "copy", journal, keys: ["k"], collations: [""], maxRowid: null };
}

/** Triggers that refuse every write to the table while the journal is open. */
function freezeTable(sql: SqlStorage, table: string, n: number): void {
  const t = quoteIdent(table);
  for (const [when, suffix] of [["BEFORE INSERT", "bi"], ["BEFORE UPDATE", "bu"], ["BEFORE DELETE", "bd"]] as const) {
    sql.exec(`CREATE TRIGGER ${quoteIdent(`${JOURNAL_PREFIX}${n}_${suffix}`)} ${when} ON ${t} BEGIN SELECT RAISE(ABORT, '${FROZEN_TABLE_MESSAGE.replace(/'/g, "''")}'); END`);
  }
}

/** The journal of a table kept row by row, keyed as the table is: by rowid, or by its primary key with its collations. */
function createKeyedJournal(sql: SqlStorage, table: string, info: ColumnInfo[], journal: string, keys: string[], rowid: boolean): TablePlan {
  const j = quoteIdent(journal);
  const collations = rowid ? [""] : keyCollations(sql, table, keys, info);
  const maxRowid = rowid
    ? sql.exec<{ m: string }>(`SELECT quote(max(${keys[0]!})) AS m FROM ${quoteIdent(table)}`).one().m
    : null;
  const max = maxRowid === "NULL" ? null : maxRowid;
  if (rowid) {
    sql.exec(`CREATE TABLE ${j} (k0 INTEGER PRIMARY KEY, image TEXT)`);
  } else {
    const columns = keys.map((_, i) => `k${i}${collations[i] ? ` COLLATE ${collations[i]}` : ""}`);
    sql.exec(`CREATE TABLE ${j} (${columns.join(", ")}, image TEXT, PRIMARY KEY (${keys.map((_, i) => `k${i}`).join(", ")})) WITHOUT ROWID`);
  }
  countEntries(sql, journal);
  return { mode: rowid ? "rowid" : "key", journal, keys, collations, maxRowid: max };
}

/**
 * The table's triggers: before a row the snapshot held changes, its pre-image goes into the
 * journal (with every row the new values would collide with); a key written since gets a marker.
 */
function createCopyTriggers(sql: SqlStorage, table: string, n: number, shape: TableShape, plan: TablePlan, uniques: UniqueIndex[]): void {
  const j = quoteIdent(plan.journal);
  const t = quoteIdent(table);
  const { keys, maxRowid: max } = plan;
  const rowid = plan.mode === "rowid";
  const trigger = (when: string, body: string[], suffix: string, condition = "") =>
    sql.exec(
      `CREATE TRIGGER ${quoteIdent(`${JOURNAL_PREFIX}${n}_${suffix}`)} ${when} ON ${t} FOR EACH ROW WHEN ${GUARD}${condition ? ` AND (${condition})` : ""} BEGIN ${body.map((s) => `${s};`).join(" ")} END`,
    );

  // The rowid's names (rowid, _rowid_, oid) are left bare: SQLite knows them only so.
  const key = (ref: string) => keys.map((c) => `${ref}.${rowid ? c : quoteIdent(c)}`);
  const inSnapshot = (ref: string) => (rowid ? `${key(ref)[0]} <= ${max ?? "NULL"}` : "1");
  const image = (ref: string) => shape.values((c) => `${ref}.${quoteIdent(c)}`);
  // Only the first copy of a row counts. Not INSERT OR IGNORE: a trigger's statements take the
  // conflict clause of the statement that fired them (INSERT OR REPLACE would overwrite the copy).
  const unknown = (ref: string) => `NOT EXISTS (SELECT 1 FROM ${j} WHERE ${key(ref).map((c, i) => `${j}.k${i} = ${c}`).join(" AND ")})`;
  /** Copies every row `NEW` would collide with (REPLACE deletes those without a delete trigger). */
  const ownKey = `${key(t).map((c, i) => `${c} = ${key("NEW")[i]}`).join(" AND ")}`;
  const collisions = [
    ownKey,
    ...uniques.map((index) =>
      index.map(({ column, collation }) => `${t}.${quoteIdent(column)} = NEW.${quoteIdent(column)}${collation ? ` COLLATE ${collation}` : ""}`).join(" AND "),
    ),
  ].map((match) => `INSERT INTO ${j} SELECT ${key(t).join(", ")}, ${image(t)} FROM ${t} WHERE ${match} AND ${inSnapshot(t)} AND ${unknown(t)}`);
  const copyOld = `INSERT INTO ${j} SELECT ${key("OLD").join(", ")}, ${image("OLD")} WHERE ${inSnapshot("OLD")} AND ${unknown("OLD")}`;
  const markNew = `INSERT INTO ${j} SELECT ${key("NEW").join(", ")}, NULL WHERE ${inSnapshot("NEW")} AND ${unknown("NEW")}`;
  const keyMoved = key("NEW").map((c, i) => `${c} IS NOT ${key("OLD")[i]}`).join(" OR ");

  trigger("BEFORE DELETE", [copyOld], "bd");
  trigger("BEFORE UPDATE", [copyOld, ...collisions], "bu");
  trigger("AFTER UPDATE", [markNew], "au", keyMoved);
  trigger("BEFORE INSERT", collisions, "bi");
  trigger("AFTER INSERT", [markNew], "ai");
}

/** The triggers copy nothing more once the journal is over its bound: the dump fails instead. */
const GUARD = `(SELECT bytes <= max_bytes FROM ${STATE_TABLE})`;

/** Keeps the journal's size in the state row as entries come in. */
function countEntries(sql: SqlStorage, journal: string): void {
  sql.exec(
    `CREATE TRIGGER ${quoteIdent(`${journal}_count`)} AFTER INSERT ON ${quoteIdent(journal)} BEGIN UPDATE ${STATE_TABLE} SET bytes = bytes + ${ENTRY_OVERHEAD_BYTES} + coalesce(length(CAST(NEW.image AS BLOB)), 0); END`,
  );
}

interface IndexListRow {
  name: string;
  unique: number;
  [key: string]: SqlStorageValue;
}
interface IndexColumnRow {
  cid: number;
  name: string | null;
  coll: string;
  key: number;
  [key: string]: SqlStorageValue;
}

const COLLATION_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A UNIQUE index's key columns with their collations. */
type UniqueIndex = Array<{ column: string; collation: string }>;

/** Each UNIQUE index's key columns with their collations; null when one of them holds an expression. */
function uniqueIndexes(sql: SqlStorage, table: string): UniqueIndex[] | null {
  const indexes = sql.exec<IndexListRow>(`PRAGMA index_list(${quoteIdent(table)})`).toArray().filter((i) => i.unique === 1);
  const out: UniqueIndex[] = [];
  for (const index of indexes) {
    const columns = sql.exec<IndexColumnRow>(`PRAGMA index_xinfo(${quoteIdent(index.name)})`).toArray().filter((c) => c.key === 1);
    if (columns.some((c) => c.cid < 0 || c.name === null || !COLLATION_NAME.test(c.coll))) return null;
    out.push(columns.map((c) => ({ column: c.name!, collation: c.coll })));
  }
  return out;
}

/** The collation of each primary-key column of a WITHOUT ROWID table, as its key index orders it. */
function keyCollations(sql: SqlStorage, table: string, keys: string[], info: ColumnInfo[]): string[] {
  const pk = sql.exec<IndexListRow & { origin: string }>(`PRAGMA index_list(${quoteIdent(table)})`).toArray().find((i) => i.origin === "pk");
  const columns = pk ? sql.exec<IndexColumnRow>(`PRAGMA index_xinfo(${quoteIdent(pk.name)})`).toArray() : [];
  return keys.map((k) => {
    const coll = columns.find((c) => c.name === k && c.key === 1)?.coll ?? "BINARY";
    if (!COLLATION_NAME.test(coll) || !info.some((c) => c.name === k)) throw new Error(`unexpected key column ${k}`);
    return coll;
  });
}
