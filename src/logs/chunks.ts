/**
 * Where an app's runtime output is kept: R2 objects of NDJSON lines under
 * `apps/<app id>/runtime/`, each a chunk of up to CHUNK_LINES lines (or CHUNK_BYTES), indexed by
 * the app's AppLogs object. Pure planning here (which chunks a flush writes or drops, which a
 * search reads); the object does the I/O.
 */
import type { LogLine } from "../runtime/types";

/** Lines kept per app; older chunks go once the newer ones hold this many without them. */
export const KEPT_LINES = 10_000;
export const CHUNK_LINES = 500;
export const CHUNK_BYTES = 256 * 1024;

export interface ChunkRef {
  key: string;
  /** Timestamps of its first and last line. */
  first: number;
  last: number;
  count: number;
  bytes: number;
}

export function runtimeLogsPrefix(appId: string): string {
  return `apps/${appId}/runtime/`;
}

export function chunkKey(appId: string, seq: number): string {
  return `${runtimeLogsPrefix(appId)}${String(seq).padStart(10, "0")}.ndjson`;
}

export function encodeLines(lines: readonly LogLine[]): string {
  return lines.map((l) => `${JSON.stringify({ at: l.at, stream: l.stream, text: l.text })}\n`).join("");
}

export function decodeLines(body: string): LogLine[] {
  const out: LogLine[] = [];
  for (const line of body.split("\n")) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as LogLine);
    } catch {
      // A chunk is written whole by one put; a broken line would be a bug, not a reason to fail the search.
    }
  }
  return out;
}

export function linesBytes(lines: readonly LogLine[]): number {
  let bytes = 0;
  for (const l of lines) bytes += l.text.length + 48;
  return bytes;
}

/** Whether pending lines must go to R2 now: a chunk's worth, or the oldest has waited long enough. */
export function shouldFlush(pending: { count: number; bytes: number; since: number | null }, now: number, maxWaitMs: number): boolean {
  if (pending.count === 0) return false;
  return pending.count >= CHUNK_LINES || pending.bytes >= CHUNK_BYTES || (pending.since !== null && now - pending.since >= maxWaitMs);
}

/**
 * A flush of `count` lines (`bytes`): merge them into the newest chunk while it is still small
 * (rewriting only that small object, so a quiet app does not end up with thousands of one-line
 * chunks), or start a new chunk.
 */
export function flushTarget(chunks: readonly ChunkRef[], count: number, bytes: number): "merge" | "new" {
  const last = chunks.at(-1);
  return last && last.count + count <= CHUNK_LINES && last.bytes + bytes <= CHUNK_BYTES ? "merge" : "new";
}

/** The oldest chunks to drop so that the rest still hold at least KEPT_LINES lines. */
export function chunksToDrop(chunks: readonly ChunkRef[], pendingCount: number): number {
  let total = pendingCount + chunks.reduce((n, c) => n + c.count, 0);
  let drop = 0;
  while (drop < chunks.length && total - chunks[drop]!.count >= KEPT_LINES) total -= chunks[drop++]!.count;
  return drop;
}

/** Chunks that may hold lines in [since, until], newest first (a search reads them until it has enough). */
export function chunksToRead(chunks: readonly ChunkRef[], since: number | undefined, until: number | undefined): ChunkRef[] {
  return chunks.filter((c) => (since === undefined || c.last >= since) && (until === undefined || c.first <= until)).reverse();
}
