/**
 * Start-export and poll latency under concurrent clients, each against the trivial route
 * `/healthz` of the same Worker under the same conditions: idle for the start requests (of empty
 * databases), and for the polls the same span of an export of the same database (from the start
 * request's reply to the moment the archive is ready).
 */
import type { BenchContext } from "./context";
import type { Dataset } from "./export-phase";
import { type Reply, percentile, runLoad, statusCounts } from "./load";
import { type ResultRow, row } from "./report";
import { type BenchAccount, createDatabase, startExport, waitUntilReady } from "./worker-client";

interface Percentiles {
  p50: number[];
  p99: number[];
}

function record(into: Percentiles, replies: Reply[]): void {
  const ms = replies.map((r) => r.ms);
  into.p50.push(percentile(ms, 50));
  into.p99.push(percentile(ms, 99));
}

/** Measures both latencies; `pollData` is the database exported while the polls run. */
export async function measureLatency(ctx: BenchContext, account: BenchAccount, pollData: Dataset): Promise<ResultRow[]> {
  const { clients, requests, starts, runs } = ctx.options;
  const base = ctx.worker.server.url;
  const healthz = () => ({ method: "GET" as const, url: `${base}/healthz` });

  // One database per start request of a run, so every start is a fresh export (no 429); with no
  // cooldown they are exported again in the next run, once the previous run's exports are done.
  ctx.progress(`latency: creating ${clients * starts} databases`);
  const ids: string[] = [];
  for (let i = 0; i < clients * starts; i++) ids.push(await createDatabase(account, `latency ${i}`));

  const start: Percentiles = { p50: [], p99: [] };
  const idle: Percentiles = { p50: [], p99: [] };
  const poll: Percentiles = { p50: [], p99: [] };
  const busy: Percentiles = { p50: [], p99: [] };
  for (let run = 1; run <= runs; run++) {
    ctx.progress(`latency run ${run}/${runs}: /healthz idle, then ${ids.length} export starts`);
    record(idle, (await runLoad({ clients, requestsPerClient: starts, next: healthz })).replies);
    const started = await runLoad({
      clients,
      requestsPerClient: starts,
      next: (c, i) => ({
        method: "POST",
        url: `${base}/api/v1/dbs/${ids[c * starts + i]}/export`,
        headers: { Authorization: `Bearer ${account.token}` },
      }),
    });
    const accepted = started.replies.filter((r) => r.status === 200);
    ctx.check(`latency run ${run} starts`, accepted.length === ids.length, statusCounts(started.replies));
    record(start, accepted);
    ctx.progress(`latency run ${run}/${runs}: waiting for ${accepted.length} exports`);
    for (const { body } of accepted) await waitUntilReady({ url: (JSON.parse(body) as { url: string }).url, startedAt: performance.now(), startMs: 0 });

    // Polls ask for one byte, so the reply that ends a client's loop (the export is ready) is tiny.
    ctx.progress(`latency run ${run}/${runs}: polling during a ${pollData.label} export`);
    const exporting = await startExport(account, pollData.databaseId);
    const link = { method: "GET" as const, url: exporting.url, headers: { Range: "bytes=0-0" } };
    const polled = await runLoad({ clients, requestsPerClient: requests, next: () => link, goOn: (s) => s === 503 });
    record(poll, polled.replies);
    ctx.note(`latency run ${run}: the start reply came ${(exporting.startMs / 1000).toFixed(1)} s after the request; polls of the link then answered ${statusCounts(polled.replies)}`);
    await waitUntilReady(exporting);

    ctx.progress(`latency run ${run}/${runs}: /healthz over the same span of another ${pollData.label} export`);
    let exported = false;
    const again = await startExport(account, pollData.databaseId);
    const [busyLoad] = await Promise.all([
      runLoad({ clients, requestsPerClient: requests, next: healthz, goOn: () => !exported }),
      waitUntilReady(again).then(() => (exported = true)),
    ]);
    record(busy, busyLoad.replies);
  }

  const who = `${clients} clients`;
  const during = `/healthz, same span of a ${pollData.label} export`;
  return [
    row(`Start export of an empty database (${who})`, "p50, ms", start.p50, "/healthz, idle", idle.p50, "lower"),
    row(`Start export of an empty database (${who})`, "p99, ms", start.p99, "/healthz, idle", idle.p99, "lower"),
    row(`Poll of a ${pollData.label} export's link, start reply to ready (${who})`, "p50, ms", poll.p50, during, busy.p50, "lower"),
    row(`Poll of a ${pollData.label} export's link, start reply to ready (${who})`, "p99, ms", poll.p99, during, busy.p99, "lower"),
  ];
}
