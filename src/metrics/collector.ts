/**
 * The proxy's side of the metrics (docs/metrics.md, "Collection"): each request an app's instance
 * answers is counted in the isolate, per app and minute, and nothing is written per request. The
 * first request after a flush schedules the next one FLUSH_MS later, so counts reach the app's
 * store in one batch per isolate and app at least every 10 s while traffic flows. Counts are
 * best effort: an isolate that dies before its flush loses at most those seconds of counts, never
 * a change to an app.
 */
import { type Histogram, addTo } from "./latency-histogram";
import { type StatusClass, emptyRequests, statusClass } from "./series";

export const FLUSH_MS = 10_000;

/** One app's counts for one minute (`at`: the minute's start, Unix seconds). */
export interface Tally {
  at: number;
  requests: Record<StatusClass, number>;
  latency: Histogram;
  bytesOut: number;
}

export class MetricsCollector {
  #pending = new Map<string, Map<number, Tally>>();

  /** Counts one answer; true when it is the first since the last flush (the caller schedules one). */
  record(appId: string, atMs: number, status: number, latencyMs: number | null, bytesOut: number): boolean {
    const first = this.#pending.size === 0;
    let minutes = this.#pending.get(appId);
    if (!minutes) this.#pending.set(appId, (minutes = new Map()));
    const at = Math.floor(atMs / 60_000) * 60;
    let tally = minutes.get(at);
    if (!tally) minutes.set(at, (tally = { at, requests: emptyRequests(), latency: {}, bytesOut: 0 }));
    tally.requests[statusClass(status)]++;
    if (latencyMs !== null) addTo(tally.latency, latencyMs);
    tally.bytesOut += bytesOut;
    return first;
  }

  /** Bytes of a body counted after the answer was recorded (a streamed body without a length). */
  addBytes(appId: string, atMs: number, bytes: number): boolean {
    const first = this.#pending.size === 0;
    const at = Math.floor(atMs / 60_000) * 60;
    let minutes = this.#pending.get(appId);
    if (!minutes) this.#pending.set(appId, (minutes = new Map()));
    const tally = minutes.get(at) ?? { at, requests: emptyRequests(), latency: {}, bytesOut: 0 };
    tally.bytesOut += bytes;
    minutes.set(at, tally);
    return first;
  }

  /** Everything counted so far, per app; the collector starts empty again. */
  take(): Map<string, Tally[]> {
    const out = new Map<string, Tally[]>();
    for (const [appId, minutes] of this.#pending) out.set(appId, [...minutes.values()]);
    this.#pending = new Map();
    return out;
  }
}
