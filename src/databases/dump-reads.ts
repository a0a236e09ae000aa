/**
 * Reading a table's pages for the dump: how many rows a page asks for, and how a page's INSERTs
 * cross into JavaScript (row by row, or whole) and are cut into chunks.
 */

import { release } from "../lib/release";
import type { PageQuery } from "./dump-pages";

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

/** What one page gave: its INSERTs, how many rows they hold, the last one's walk key, and whether it filled a chunk. */
export interface PageText {
  bytes: Uint8Array<ArrayBuffer>;
  rows: number;
  after: string[] | null;
  full: boolean;
}

/**
 * One page read a row at a time: the chunk ends at the row that fills it, or before a row that
 * would take it past DUMP_CHUNK_BYTES (a row alone may exceed it). The rest of a full page
 * is read through, not left: an unfinished statement would keep SQLite from dropping the snapshot
 * journal's tables when the dump ends.
 */
export function readRowByRow(sql: SqlStorage, query: PageQuery, prefix: string, keyCount: number): PageText {
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
export function readWholePage(sql: SqlStorage, query: PageQuery, whole: (text: string) => string, prefix: string, keyCount: number): PageText | null {
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
export function joinBytes(parts: Uint8Array<ArrayBuffer>[], size: number): Uint8Array<ArrayBuffer> {
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
