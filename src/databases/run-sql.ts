/**
 * Running the SQL console's statements in a database object: the checks before a run, and the
 * run itself as one transaction whose results are capped to what one reply may hold.
 */
import { fromBase64, toBase64 } from "../lib/encoding";
import { JOURNAL_PREFIX } from "./journal-plan";
import { splitStatements } from "./split-sql";

/** A value in or out of the SQL console: BLOBs travel as `{ blob: "<base64>" }`. */
export type SqlValue = string | number | boolean | null | { blob: string };
export type SqlOutValue = string | number | null | { blob: string };

export interface StatementResult {
  columns: string[];
  rows: SqlOutValue[][];
  rows_written: number;
  /** True when the statement returned more rows than one reply may hold. */
  truncated?: boolean;
}

export type ExecuteOutcome =
  | { ok: true; results: StatementResult[] }
  | { ok: false; error: string; statement: number };

/** Why a schema change is refused while an export runs. */
export const DDL_DURING_EXPORT =
  "Schema changes (CREATE, DROP, ALTER) are refused while an export of this database is running, so that the export stays one consistent snapshot. Try again when the export has finished.";
/** Why SQL naming the journal's objects is refused. */
export const RESERVED_NAMES = `Names beginning with ${JOURNAL_PREFIX} are reserved for exports.`;
const SCHEMA_CHANGE = /^(CREATE|DROP|ALTER|VACUUM)\b/i;

/** At most this many rows of one statement go back to the console. */
export const MAX_RESULT_ROWS = 1000;
/** And at most about this many bytes of values in all, so a reply stays small. */
export const MAX_RESULT_BYTES = 1_000_000;

function toBinding(value: SqlValue): SqlStorageValue {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value !== null && typeof value === "object") return fromBase64(value.blob).buffer;
  return value;
}

function toOut(value: SqlStorageValue): SqlOutValue {
  if (value instanceof ArrayBuffer) return { blob: toBase64(value) };
  return value as string | number | null;
}

function sizeOf(value: SqlOutValue): number {
  if (value === null) return 4;
  if (typeof value === "object") return value.blob.length;
  return typeof value === "string" ? value.length : 8;
}

/**
 * The statements of `sql`, or why they are not run: none, parameters with more than one, a name
 * of the journal's, or (while `snapshotKept`) a schema change.
 */
export function checkStatements(sql: string, params: SqlValue[], snapshotKept: boolean): string[] | ExecuteOutcome {
  const statements = splitStatements(sql);
  if (statements.length === 0) return { ok: false, error: "There is no SQL statement to run.", statement: 0 };
  if (params.length > 0 && statements.length > 1) {
    return { ok: false, error: "Parameters can only be bound when the SQL holds a single statement.", statement: 0 };
  }
  if (sql.toLowerCase().includes(JOURNAL_PREFIX)) return { ok: false, error: RESERVED_NAMES, statement: 0 };
  // A snapshot is being kept (and not lost already): the schema must stay as it was.
  if (snapshotKept) {
    const ddl = statements.findIndex((s) => SCHEMA_CHANGE.test(withoutLeadingComments(s)));
    if (ddl !== -1) return { ok: false, error: DDL_DURING_EXPORT, statement: ddl };
  }
  return statements;
}

/** Runs `statements` as one transaction: all of them apply or none does. */
export function runStatements(storage: DurableObjectStorage, statements: string[], params: SqlValue[]): ExecuteOutcome {
  const results: StatementResult[] = [];
  let current = 0;
  try {
    storage.transactionSync(() => {
      let budget = MAX_RESULT_BYTES;
      for (const [index, statement] of statements.entries()) {
        current = index;
        const run = runOne(storage.sql, statement, params, budget);
        budget = run.budget;
        results.push(run.result);
      }
    });
  } catch (err) {
    return { ok: false, error: cleanSqliteMessage(err), statement: current };
  }
  return { ok: true, results };
}

/** One statement's result, its rows cut at MAX_RESULT_ROWS or once `budget` bytes of values are spent; and the budget left. */
function runOne(sql: SqlStorage, statement: string, params: SqlValue[], budget: number): { result: StatementResult; budget: number } {
  const cursor = sql.exec(statement, ...params.map(toBinding));
  const rows: SqlOutValue[][] = [];
  let truncated = false;
  for (const raw of cursor.raw()) {
    if (rows.length >= MAX_RESULT_ROWS || budget <= 0) {
      truncated = true;
      continue;
    }
    const row = raw.map(toOut);
    budget -= row.reduce<number>((n, v) => n + sizeOf(v), 0);
    rows.push(row);
  }
  return { result: { columns: cursor.columnNames, rows, rows_written: cursor.rowsWritten, ...(truncated ? { truncated } : {}) }, budget };
}

/** SQLite's message without the runtime's suffix, e.g. `no such table: users`. */
function cleanSqliteMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/: SQLITE_[A-Z_]+( \(extended: SQLITE_[A-Z_]+\))?$/, "");
}

/** A statement's text after any comments and blank space it starts with. */
function withoutLeadingComments(statement: string): string {
  return statement.replace(/^(\s+|--[^\n]*(\n|$)|\/\*[\s\S]*?(\*\/|$))*/, "");
}
