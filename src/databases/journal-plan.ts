/**
 * The plan of a snapshot journal as the object's SQLite storage keeps it, read by the dump (see
 * snapshot-journal.ts for how a journal is kept). Everything a journal owns is named with
 * JOURNAL_PREFIX: the dump leaves such objects out, and customer SQL may not name them.
 */

/** The prefix of every table and trigger a snapshot journal owns. */
export const JOURNAL_PREFIX = "_export_snapshot_";
/** One row per dumped table: how its snapshot is kept. */
export const PLAN_TABLE = `${JOURNAL_PREFIX}tables`;
/** One row: the journal's size so far, its bound, and the AUTOINCREMENT counters at the snapshot. */
export const STATE_TABLE = `${JOURNAL_PREFIX}state`;

/**
 * How one table's snapshot is kept while a dump is open:
 * - `rowid`: pre-images keyed by rowid; rowids above `maxRowid` were written since.
 * - `key`: a WITHOUT ROWID table; pre-images keyed by its primary key, and a marker (NULL image)
 *   for every key inserted since.
 * - `copy`: a virtual table (SQLite allows no trigger on it), copied whole when the dump began.
 * - `frozen`: a table with no usable key (every name of its rowid taken by a column): writes to it
 *   are refused until the dump ends.
 */
export interface TablePlan {
  mode: "rowid" | "key" | "copy" | "frozen";
  journal: string;
  /** The key columns the journal is keyed by (the rowid's free name, or the primary key). */
  keys: string[];
  /** Each key column's collation (empty: BINARY). */
  collations: string[];
  /** For `rowid`: the largest rowid at the snapshot, as a SQL literal (null: the table was empty). */
  maxRowid: string | null;
}

export interface JournalPlan {
  tables: Map<string, TablePlan>;
  /** The AUTOINCREMENT counters as the dump writes them, taken at the snapshot. */
  sequence: string;
}

interface PlanRow {
  name: string;
  plan: string;
  [key: string]: SqlStorageValue;
}

/** The journal in force, or null when the database has none (a dump read without one). */
export function readJournalPlan(sql: SqlStorage): JournalPlan | null {
  const present = sql.exec("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", STATE_TABLE).toArray().length > 0;
  if (!present) return null;
  const sequence = sql.exec<{ sequence: string }>(`SELECT sequence FROM ${STATE_TABLE}`).one().sequence;
  const tables = new Map(sql.exec<PlanRow>(`SELECT name, plan FROM ${PLAN_TABLE}`).toArray().map((r) => [r.name, JSON.parse(r.plan) as TablePlan]));
  return { tables, sequence };
}
