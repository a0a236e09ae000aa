import type { ByteRange } from "./ranges";

/**
 * The framing of a `multipart/byteranges` body (RFC 9110 section 14.6, RFC 2046 section 5.1),
 * computed up front so the reply can state its exact Content-Length before any byte is read.
 */
export interface MultipartLayout {
  /** Each part's header block, sent just before that part's bytes. */
  parts: { head: string; range: ByteRange }[];
  /** The closing delimiter. */
  tail: string;
  /** Bytes of the whole body: framing plus every range. */
  length: number;
  contentType: string;
}

/** `Content-Range` of a part or a single-range reply. */
export function contentRange(range: ByteRange, size: number): string {
  return `bytes ${range.start}-${range.end}/${size}`;
}

/** Lays out the parts; `boundary` must not occur in the archive (a random one will not). */
export function multipartLayout(ranges: ByteRange[], size: number, boundary: string, partType: string): MultipartLayout {
  const parts = ranges.map((range, i) => ({
    // The CRLF before a delimiter belongs to the delimiter, so it closes the previous part.
    head: `${i === 0 ? "" : "\r\n"}--${boundary}\r\nContent-Type: ${partType}\r\nContent-Range: ${contentRange(range, size)}\r\n\r\n`,
    range,
  }));
  const tail = `\r\n--${boundary}--\r\n`;
  // The framing is ASCII, so its length in characters is its length in bytes.
  const length = parts.reduce((n, p) => n + p.head.length + p.range.end - p.range.start + 1, tail.length);
  return { parts, tail, length, contentType: `multipart/byteranges; boundary=${boundary}` };
}
