/** Pure readers of the download reply's headers and of the link's shape (docs/api.md, export rules 1 and 5). */

/** A parsed `Content-Range`: `bytes START-END/TOTAL`, or `bytes *\/TOTAL` on 416. */
export interface ContentRange {
  start?: number;
  end?: number;
  total?: number;
}

/** Reads a single-range `Content-Range`; undefined when it is missing or not in bytes. */
export function parseContentRange(header: string | null): ContentRange | undefined {
  const match = header === null ? null : /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/i.exec(header.trim());
  if (!match) return undefined;
  const [, start, end, total] = match;
  return {
    ...(start !== undefined && end !== undefined ? { start: Number(start), end: Number(end) } : {}),
    ...(total !== "*" ? { total: Number(total) } : {}),
  };
}

/**
 * The file name from `Content-Disposition`, reduced to a plain name in the current directory:
 * a server never chooses where the client writes.
 */
export function filenameFromDisposition(header: string | null): string | undefined {
  if (header === null) return undefined;
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(header);
  const plain = /filename\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(header);
  let name: string | undefined;
  try {
    name = extended ? decodeURIComponent(extended[1]!.trim()) : (plain?.[1] ?? plain?.[2]);
  } catch {
    name = plain?.[1] ?? plain?.[2];
  }
  const base = name?.split(/[/\\]/).pop()?.replace(/[\x00-\x1f\x7f]/g, "").trim();
  return base && base !== "." && base !== ".." ? base : undefined;
}

const LINK_PATH = /\/api\/v1\/dbs\/([^/]+)\/exports\/([^/]+)\/download$/;

/** The export id in a download link, for messages and the summary (never the link itself). */
export function exportIdOf(link: string): string | undefined {
  try {
    return LINK_PATH.exec(new URL(link).pathname)?.[2];
  } catch {
    return undefined;
  }
}

/** The name used when the server names no file: `<database_id>-<export_id>.sql.gz`. */
export function fallbackFilename(link: string, databaseId: string): string {
  const exportId = exportIdOf(link);
  return exportId ? `${databaseId}-${exportId}.sql.gz` : `${databaseId}.sql.gz`;
}

/** `X-Export-SHA256` as lowercase hexadecimal, or undefined when missing or not a SHA-256. */
export function readSha256(header: string | null): string | undefined {
  const value = header?.trim().toLowerCase();
  return value && /^[0-9a-f]{64}$/.test(value) ? value : undefined;
}
