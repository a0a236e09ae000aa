/**
 * Start-export and 503-poll latency under concurrent clients, each against the trivial route
 * `/healthz` of the same Worker under the same conditions: idle for the start requests, during an
 * export of the same database for the polls.
 */
import type { BenchContext } from "./context";
import type { Dataset } from "./export-phase";
import { type LoadResult, percentile, runLoad } from "./load";
import { type ResultRow, row } from "./report";
import { type BenchAccount, createDatabase, startExport, waitUntilReady } from "./worker-client";

interface Percentiles {
  p50: number[];
  p99: number[];
}

function record(into: Percentiles, result: LoadResult): void {
  into.p50.push(percentile(result.latenciesMs, 50));
  into.p99.push(percentile(result.latenciesMs, 99));
}

const statusText = (r: LoadResult) => Object.entries(r.statuses).map(([s, n]) => `${n}x${s}`).join(" ");

/** Measures both latencies; `pollData` is the database exported while the polls run. */
export async function measureLatency(ctx: BenchContext, account: BenchAccount, pollData: Dataset): Promise<ResultRow[]> {
  const { clients, requests, starts, runs } = ctx.options;
  const base = ctx.server.url;
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
    record(idle, await runLoad({ clients, requestsPerClient: starts, next: healthz, status: 200 }));
    const links: string[] = [];
    const started = await runLoad({
      clients,
      requestsPerClient: starts,
      status: 200,
      next: (c, i) => ({
        method: "POST",
        url: `${base}/api/v1/dbs/${ids[c * starts + i]}/export`,
        headers: { Authorization: `Bearer ${account.token}` },
      }),
      onBody: (body) => links.push((JSON.parse(body) as { url: string }).url),
    });
    ctx.check(`latency run ${run} starts`, started.latenciesMs.length === ids.length, statusText(started));
    record(start, started);
    ctx.progress(`latency run ${run}/${runs}: waiting for ${links.length} exports`);
    for (const url of links) await waitUntilReady({ url, startedAt: performance.now(), startMs: 0 });

    ctx.progress(`latency run ${run}/${runs}: polling during a ${pollData.label} export`);
    const exporting = await startExport(account, pollData.databaseId);
    const link = { method: "GET" as const, url: exporting.url };
    const polled = await runLoad({ clients, requestsPerClient: requests, next: () => link, status: 503 });
    record(poll, polled);
    if (polled.latenciesMs.length < (clients * requests) / 2) {
      ctx.log(`latency run ${run}: only ${polled.latenciesMs.length} 503 replies before the export finished (${statusText(polled)})`);
    }
    await waitUntilReady(exporting);

    ctx.progress(`latency run ${run}/${runs}: /healthz during a ${pollData.label} export`);
    const again = await startExport(account, pollData.databaseId);
    record(busy, await runLoad({ clients, requestsPerClient: requests, next: healthz, status: 200 }));
    await waitUntilReady(again);
  }

  const who = `${clients} clients`;
  return [
    row(`Start export (${who})`, "p50, ms", start.p50, "/healthz, idle", idle.p50, "lower"),
    row(`Start export (${who})`, "p99, ms", start.p99, "/healthz, idle", idle.p99, "lower"),
    row(`503 poll (${who})`, "p50, ms", poll.p50, `/healthz during a ${pollData.label} export`, busy.p50, "lower"),
    row(`503 poll (${who})`, "p99, ms", poll.p99, `/healthz during a ${pollData.label} export`, busy.p99, "lower"),
  ];
}
