/**
 * The geometry of the console's metric charts (docs/metrics.md, "Console"): values placed on a
 * fixed drawing area as polyline points, a gap (null) breaking the line, and a top of scale that
 * is a round number at or above the largest value (or the plan's limit, when the chart has one).
 * Pure, so the server draws the same SVG with or without JavaScript.
 */

export const WIDTH = 600;
export const HEIGHT = 160;

/** The smallest "nice" number (1, 2 or 5 times a power of ten) at or above `value`; 1 for nothing. */
export function niceCeiling(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 2, 5, 10]) if (m * power >= value - 1e-9) return m * power;
  return 10 * power;
}

/** The x of the i-th of n points, spread over the width (one point sits in the middle). */
export function xOf(i: number, n: number): number {
  return n <= 1 ? WIDTH / 2 : Math.round((i / (n - 1)) * WIDTH * 10) / 10;
}

export function yOf(value: number, top: number): number {
  return Math.round((HEIGHT - (Math.min(value, top) / top) * HEIGHT) * 10) / 10;
}

/** Polyline `points` attributes, one per unbroken run of values. */
export function lineSegments(values: readonly (number | null)[], top: number): string[] {
  const segments: string[] = [];
  let current: string[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (current.length) segments.push(current.join(" "));
      current = [];
      return;
    }
    current.push(`${xOf(i, values.length)},${yOf(v, top)}`);
  });
  if (current.length) segments.push(current.join(" "));
  return segments;
}
