/**
 * Which requests get their log line. Every error and every slow request is logged; a plain
 * success (and the export link's 503 `export_pending`, the polling protocol's normal wait) is
 * logged one time in SUCCESS_SAMPLE_RATE, its line saying so (`sample_rate`), so totals can still
 * be read from the logs. Writing a line costs more than the rest of a short request's own work.
 */

/** One success line in this many. */
export const SUCCESS_SAMPLE_RATE = 100;
/** A request at least this long is always logged, whatever its status. */
export const SLOW_REQUEST_MS = 1000;

/** How many requests the line stands for: 1 (always logged) or SUCCESS_SAMPLE_RATE (sampled). */
export function requestLogRate(status: number, durationMs: number): number {
  if (durationMs >= SLOW_REQUEST_MS) return 1;
  if (status < 400 || status === 503) return SUCCESS_SAMPLE_RATE;
  return 1;
}

/** Whether this request's line is written; `draw` is uniform in [0, 1). */
export function shouldLogRequest(rate: number, draw: number): boolean {
  return rate <= 1 || draw * rate < 1;
}
