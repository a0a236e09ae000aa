/**
 * Response times as a fixed histogram of geometric buckets (docs/metrics.md, "Collection"): bucket
 * `i` holds times in (BASE^(i-1), BASE^i] milliseconds, so a quantile read back is at most 10 %
 * above the true one, whatever the spread. Histograms of any two isolates or minutes merge by
 * adding counts, which is what a per-minute row needs; a sketch with fewer buckets would save
 * bytes a minute row does not miss. Pure: no clock, no I/O.
 */

/** Ratio between bucket bounds: the most a quantile is overstated. */
export const BASE = 1.1;
/** Times at or below 1 ms share bucket 0; above 2 minutes share the last. */
export const LAST_BUCKET = Math.ceil(Math.log(120_000) / Math.log(BASE));

/** Sparse counts: bucket index -> requests. */
export type Histogram = Record<number, number>;

export function bucketOf(ms: number): number {
  if (!(ms > 1)) return 0;
  return Math.min(LAST_BUCKET, Math.ceil(Math.log(ms) / Math.log(BASE) - 1e-9));
}

/** The upper bound of a bucket, in whole milliseconds as the JSON shows them (at least 1). */
export function bucketUpperMs(bucket: number): number {
  return Math.max(1, Math.round(BASE ** bucket));
}

export function addTo(histogram: Histogram, ms: number, count = 1): void {
  const b = bucketOf(ms);
  histogram[b] = (histogram[b] ?? 0) + count;
}

/** `into` gains `from`'s counts. */
export function mergeInto(into: Histogram, from: Histogram): Histogram {
  for (const [bucket, n] of Object.entries(from)) into[Number(bucket)] = (into[Number(bucket)] ?? 0) + n;
  return into;
}

/** The q-quantile (0 < q <= 1) as its bucket's upper bound; null for an empty histogram. */
export function quantileMs(histogram: Histogram, q: number): number | null {
  const buckets = Object.keys(histogram).map(Number).sort((a, b) => a - b);
  const total = buckets.reduce((sum, b) => sum + histogram[b]!, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const b of buckets) {
    seen += histogram[b]!;
    if (seen >= rank) return bucketUpperMs(b);
  }
  return bucketUpperMs(buckets[buckets.length - 1]!);
}
