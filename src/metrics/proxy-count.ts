/**
 * Counting an app's answers as the proxy passes them (docs/metrics.md, "Collection"): status
 * class, time to the instance's headers and bytes out go into the isolate's collector; the first
 * answer after a flush schedules the next flush `flushSeconds` later, in the request's
 * `waitUntil`. Metrics are the one thing here allowed to live in memory for a few seconds: losing
 * an isolate's last seconds of counts changes no app, no bill and no record.
 */
import { describeError, log } from "../http/log";
import { appMetrics } from "./app-metrics";
import type { MetricsCollector } from "./collector";

export interface CountContext {
  env: Env;
  collector: MetricsCollector;
  flushSeconds: number;
  waitUntil: ((work: Promise<unknown>) => void) | null;
}

/** Counts `res`, an answer of `appId`'s instance (or the proxy's 502/504 page for it); returns the answer to send. */
export function countAnswer(ctx: CountContext, appId: string, res: Response, latencyMs: number | null, nowMs: number): Response {
  const length = res.headers.get("Content-Length");
  const streamed = res.body !== null && length === null && res.status !== 101;
  const bytes = length === null ? 0 : Number(length) || 0;
  if (ctx.collector.record(appId, nowMs, res.status, latencyMs, bytes)) schedule(ctx);
  if (!streamed) return res;
  // A body without a length is counted as it passes, and its total added when it ends.
  let total = 0;
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      total += chunk.byteLength;
      controller.enqueue(chunk);
    },
    flush() {
      if (ctx.collector.addBytes(appId, Date.now(), total)) schedule(ctx);
    },
  });
  return new Response(res.body!.pipeThrough(counter), res);
}

function schedule(ctx: CountContext): void {
  const work = new Promise((resolve) => setTimeout(resolve, ctx.flushSeconds * 1000)).then(() => flush(ctx.env, ctx.collector));
  if (ctx.waitUntil) ctx.waitUntil(work);
}

/** Sends what the collector holds to each app's store. */
export async function flush(env: Env, collector: MetricsCollector): Promise<void> {
  const batches = collector.take();
  await Promise.all(
    [...batches].map(([appId, tallies]) =>
      appMetrics(env, appId)
        .add(appId, tallies)
        .catch((err: unknown) => log("warn", "metrics not stored", { app_id: appId, ...describeError(err) })),
    ),
  );
}
