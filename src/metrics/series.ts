/**
 * The metrics route's query and its answer's shape (docs/metrics.md, "JSON route"): `from` and
 * `to` as ISO 8601 or Unix seconds, `step` 60 or 3600, at most 1,440 points, one point per step,
 * oldest first, with zeros where nothing happened. Pure.
 */
import { type Histogram, mergeInto, quantileMs } from "./latency-histogram";

export const STEPS = [60, 3600] as const;
export type Step = (typeof STEPS)[number];
export const MAX_POINTS = 1440;
/** Without `from`: the last hour. */
export const DEFAULT_SPAN_SECONDS = 3600;

export type StatusClass = "2xx" | "3xx" | "4xx" | "5xx";

/** The class a status counts under; 1xx (a WebSocket's 101) counts with 2xx, anything odd with 5xx. */
export function statusClass(status: number): StatusClass {
  if (status < 300) return "2xx";
  if (status < 400) return "3xx";
  if (status < 500) return "4xx";
  return "5xx";
}

/** The start (Unix seconds) of the step-long bucket holding `seconds`. */
export function bucketStart(seconds: number, step: number): number {
  return Math.floor(seconds / step) * step;
}

/** A time parameter: Unix seconds (digits) or an ISO 8601 date-time; null when it is neither. */
export function parseTime(value: string): number | null {
  if (/^\d{1,12}$/.test(value)) return Number(value);
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

export type MetricsQuery = { from: number; to: number; step: Step };
export type QueryOutcome = { ok: true; query: MetricsQuery } | { ok: false; field: "from" | "to" | "step"; message: string };

/** Reads `from`, `to`, `step` at `nowSeconds`; the range is aligned to whole steps. */
export function parseMetricsQuery(params: { from?: string; to?: string; step?: string }, nowSeconds: number): QueryOutcome {
  let step: Step = 60;
  if (params.step !== undefined) {
    const n = Number(params.step);
    if (!STEPS.includes(n as Step)) return { ok: false, field: "step", message: "step must be 60 or 3600 (seconds)." };
    step = n as Step;
  }
  const to = params.to === undefined ? nowSeconds : parseTime(params.to);
  if (to === null) return { ok: false, field: "to", message: "to must be Unix seconds or an ISO 8601 date-time." };
  // Without `from`: the last hour's minutes (or the last day's hours), the one holding `to` included.
  const from = params.from === undefined ? bucketStart(to - 1, step) - ((step === 60 ? DEFAULT_SPAN_SECONDS : 86400) / step - 1) * step : parseTime(params.from);
  if (from === null) return { ok: false, field: "from", message: "from must be Unix seconds or an ISO 8601 date-time." };
  if (from >= to) return { ok: false, field: "from", message: "from must be before to." };
  const first = bucketStart(from, step);
  const last = bucketStart(to - 1, step);
  if ((last - first) / step + 1 > MAX_POINTS) return { ok: false, field: "from", message: `At most ${MAX_POINTS} points: narrow from..to or use step=3600.` };
  return { ok: true, query: { from: first, to: last + step, step } };
}

/** One stored bucket (a minute or an hour row), as the store returns it. */
export interface StoredBucket {
  at: number;
  requests: Record<StatusClass, number>;
  latency: Histogram;
  bytesOut: number;
  cpuPercentSum: number;
  cpuSamples: number;
  memoryBytesMax: number | null;
  restarts: number;
}

export interface Point {
  at: string;
  requests: Record<StatusClass, number>;
  latency_ms: { p50: number; p95: number } | null;
  bytes_out: number;
  cpu_percent: number | null;
  memory_bytes: number | null;
  restarts: number;
}

export function emptyRequests(): Record<StatusClass, number> {
  return { "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0 };
}

/** One point per step of `query`, from the stored buckets of that step (several rows of one step merged). */
export function fillPoints(query: MetricsQuery, rows: StoredBucket[]): Point[] {
  const byAt = new Map<number, StoredBucket[]>();
  for (const row of rows) {
    const at = bucketStart(row.at, query.step);
    byAt.set(at, [...(byAt.get(at) ?? []), row]);
  }
  const points: Point[] = [];
  for (let at = query.from; at < query.to; at += query.step) points.push(pointOf(at, byAt.get(at) ?? []));
  return points;
}

function pointOf(at: number, rows: StoredBucket[]): Point {
  const requests = emptyRequests();
  const latency: Histogram = {};
  let bytes = 0, cpuSum = 0, cpuN = 0, restarts = 0;
  let memory: number | null = null;
  for (const row of rows) {
    for (const k of Object.keys(requests) as StatusClass[]) requests[k] += row.requests[k];
    mergeInto(latency, row.latency);
    bytes += row.bytesOut;
    cpuSum += row.cpuPercentSum;
    cpuN += row.cpuSamples;
    restarts += row.restarts;
    if (row.memoryBytesMax !== null) memory = Math.max(memory ?? 0, row.memoryBytesMax);
  }
  const p50 = quantileMs(latency, 0.5);
  const p95 = quantileMs(latency, 0.95);
  return {
    at: new Date(at * 1000).toISOString(),
    requests,
    latency_ms: p50 === null || p95 === null ? null : { p50, p95 },
    bytes_out: bytes,
    cpu_percent: cpuN === 0 ? null : Math.round((cpuSum / cpuN) * 10) / 10,
    memory_bytes: memory,
    restarts,
  };
}
