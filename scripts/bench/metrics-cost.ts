/**
 * What counting an app's requests costs (docs/metrics.md, "Collection"): the same build twice,
 * side by side, the second with `METRICS_COLLECTION=false`, each serving its own copy of the same
 * busybox app (same repository, image and plan), loaded by wrk in turns. The turns go on, off, off,
 * on, on, off, ... so a drift of the machine's speed during the pass falls on both sides alike,
 * and each pair of turns gives one ratio; the row shows the medians of each side and the goal
 * (goals.ts) reads their ratio.
 *
 * Why not one control plane restarted with collection off: the two passes are then minutes apart,
 * and on a 2-core machine the busybox proxy row moves by more than the 5 % the goal allows
 * between two passes (docs/performance.md has such a run).
 */
import type { BenchContext } from "./context";
import { METRICS_COST_SUBJECT } from "./goals";
import { type ResultRow, row } from "./report";
import { type WrkResult, wrk } from "./wrk";

type Output = Pick<BenchContext, "progress" | "check" | "log">;

/** One side: the app's hostname on a control plane. */
export interface ProxySide {
  url: string;
  host: string;
}

/** Pairs of turns: at least six, more when the run asks for more runs. */
export const metricsCostTurns = (runs: number) => Math.max(6, runs * 2);

/** The order of the two sides in pair `i`: on first in pairs 0, 3, 4, 7, 8, ... (ABBA). */
export const onFirst = (i: number) => i % 4 === 0 || i % 4 === 3;

/** Loads `on` and `off` in turns; returns the requests/s row (on against off) and its p50 row. */
export async function measureMetricsCost(on: ProxySide, off: ProxySide, turns: number, wrkConfig: { connections: number; seconds: number }, out: Output): Promise<ResultRow[]> {
  const load = (side: ProxySide) => wrk({ url: side.url, headers: { Host: side.host }, ...wrkConfig });
  // Warm both: the first requests compile code and fill the proxy's route cache.
  await load(on);
  await load(off);
  const onRuns: WrkResult[] = [];
  const offRuns: WrkResult[] = [];
  for (let i = 0; i < turns; i++) {
    out.progress(`requests: metrics collection on against off, pair ${i + 1}/${turns}`);
    if (onFirst(i)) {
      onRuns.push(await load(on));
      offRuns.push(await load(off));
    } else {
      offRuns.push(await load(off));
      onRuns.push(await load(on));
    }
  }
  const clean = (r: WrkResult) => r.errors === 0 && r.non2xx === 0;
  out.check(
    `${METRICS_COST_SUBJECT}: every reply 2xx`,
    onRuns.every(clean) && offRuns.every(clean),
    `on ${onRuns.map((r) => `${r.requests}/${r.non2xx}/${r.errors}`).join(" ")} | off ${offRuns.map((r) => `${r.requests}/${r.non2xx}/${r.errors}`).join(" ")} (requests/not 2xx/errors)`,
  );
  const pairRatios = onRuns.map((r, i) => (r.rps / offRuns[i]!.rps).toFixed(2));
  out.log(`Metrics collection on/off, requests/s ratio of each pair of turns: ${pairRatios.join(" ")}`);
  const who = `wrk, ${wrkConfig.connections} connections, ${turns} turns each`;
  const offName = "the same app on a second control plane with METRICS_COLLECTION=false, in turns";
  return [
    row(METRICS_COST_SUBJECT, `requests/s (${who})`, onRuns.map((r) => r.rps), offName, offRuns.map((r) => r.rps), "higher"),
    row(METRICS_COST_SUBJECT, `p50, ms (${who})`, onRuns.map((r) => r.p50), offName, offRuns.map((r) => r.p50), "lower"),
  ];
}
