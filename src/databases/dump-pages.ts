/**
 * The queries that read a table's pages for the dump: each row's whole INSERT as bytes, then its
 * walk key as literals, from the table as it is now (livePage) or as it was when the snapshot
 * journal began (journalPage).
 */

import type { TablePlan } from "./journal-plan";
import { keyExpressions, quoteIdent, type TableShape } from "./dump-shape";

/** Each row's whole INSERT, as SQL of the row's literal list: the prefix is bound as ?1. */
function insertOf(literals: string): string {
  return `CAST(?1 || ${literals} || ');' || char(10) AS BLOB)`;
}

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

/**
 * A page's query: the same SQL text on every page of a table (the runtime keeps one prepared
 * statement per text), with the page's LIMIT, OFFSET and walk key bound (?2 on; ?1 is the INSERT prefix).
 */
export interface PageQuery {
  sql: string;
  params: (string | number)[];
}

/** A table's pages (each row's INSERT as bytes, then the walk key as literals, then anything else); `whole` wraps a page's SQL for readWholePage. */
export type Page = ((after: string[] | null, offset: number, limit: number) => PageQuery) & { whole: (text: string) => string };

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
export function livePage(table: string, shape: TableShape): Page {
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
export function journalPage(table: string, shape: TableShape, plan: TablePlan): Page {
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
