/**
 * The `Range` and `If-Range` request headers for the archive download, as RFC 9110 section 14
 * and 13.1.5 define them. Pure functions: the archive's size and ETag come in as arguments.
 */

/** Bytes `start` to `end`, both included, as in `Content-Range: bytes start-end/size`. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * What to send: the whole archive (`full`: no header, another unit, a header that is not valid,
 * or too many ranges), 416 (`unsatisfiable`), or 206 with one or more ranges in request order.
 */
export type RangeDecision = { kind: "full" } | { kind: "unsatisfiable" } | { kind: "partial"; ranges: ByteRange[] };

/**
 * More range-specs than this and the header is ignored: many tiny ranges cost far more to serve
 * than the archive itself (RFC 9110 section 14.2 lets a server ignore such a request).
 */
export const MAX_RANGES = 50;

const FULL: RangeDecision = { kind: "full" };
/** `range-unit "=" range-set`; the unit is a token (RFC 9110 sections 5.6.2 and 14.1). */
const SPECIFIER = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)=(.*)$/s;
const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

/** Decides how to answer `Range: <header>` for an archive of `size` bytes. */
export function parseRangeHeader(header: string | null | undefined, size: number): RangeDecision {
  if (header == null) return FULL;
  const specifier = SPECIFIER.exec(header.trim());
  if (!specifier || specifier[1]!.toLowerCase() !== "bytes") return FULL;
  // `1#range-spec`: comma-separated, optional whitespace around commas, empty elements allowed.
  const specs = specifier[2]!
    .split(",")
    .map((part) => part.replace(/^[ \t]+|[ \t]+$/g, ""))
    .filter((part) => part !== "");
  if (specs.length === 0 || specs.length > MAX_RANGES) return FULL;

  const wanted: ByteRange[] = [];
  for (const spec of specs) {
    const int = INT_RANGE.exec(spec);
    const suffix = SUFFIX_RANGE.exec(spec);
    if (int) {
      const [first, last] = [BigInt(int[1]!), int[2] === "" ? null : BigInt(int[2]!)];
      // last-pos before first-pos makes the whole header invalid (section 14.1.1).
      if (last !== null && last < first) return FULL;
      if (first >= BigInt(size)) continue;
      const end = last === null || last >= BigInt(size) ? size - 1 : Number(last);
      wanted.push({ start: Number(first), end });
    } else if (suffix) {
      const length = BigInt(suffix[1]!);
      if (length === 0n || size === 0) continue;
      wanted.push({ start: length >= BigInt(size) ? 0 : size - Number(length), end: size - 1 });
    } else {
      return FULL;
    }
  }
  // An empty archive has no byte to point at; it is simply sent whole.
  if (size === 0) return FULL;
  if (wanted.length === 0) return { kind: "unsatisfiable" };
  return { kind: "partial", ranges: coalesce(wanted) };
}

/**
 * Merges ranges that overlap or touch, keeping the order in which they were asked for; a merged
 * range takes the place of the first of its members (RFC 9110 section 14.3).
 */
export function coalesce(ranges: ByteRange[]): ByteRange[] {
  const out = ranges.map((r) => ({ ...r }));
  for (let i = 0; i < out.length; i++) {
    for (let j = i + 1; j < out.length; j++) {
      const [a, b] = [out[i]!, out[j]!];
      if (b.start <= a.end + 1 && a.start <= b.end + 1) {
        out[i] = { start: Math.min(a.start, b.start), end: Math.max(a.end, b.end) };
        out.splice(j, 1);
        // The grown range may now reach ones already passed over.
        j = i;
      }
    }
  }
  return out;
}

/**
 * Whether a `Range` header may be honoured given `If-Range` (RFC 9110 section 13.1.5): yes
 * without one, else only when it is exactly the current strong ETag. A date or any other tag
 * means the client holds something else, so it gets the whole archive.
 */
export function ifRangeAllows(ifRange: string | null | undefined, strongEtag: string): boolean {
  if (ifRange == null) return true;
  return ifRange.trim() === strongEtag;
}
