/**
 * Two sides of one question loaded by wrk in turns, in one pass: the turns go a, b, b, a, a, b, ...
 * (ABBA), so a drift of the machine's speed during the pass falls on both sides alike, and each
 * pair of turns gives one ratio. The row shows each side's median and their ratio, which a goal
 * (goals.ts) reads; a log line gives each pair's own ratio.
 *
 * Used where a goal compares two measures of the same proxy that differ by one thing, because two
 * passes minutes apart, each against the floor, moved by more than the 5 % such a goal allows on a
 * 2-core machine (docs/performance.md):
 * - what metrics collection costs: the same app on a second control plane with
 *   `METRICS_COLLECTION=false` (docs/metrics.md, "Collection");
 * - what the cookie rule costs: the same CGI of the same app with and without a cookie for every
 *   app, which the rule rewrites (README, "What we enforce").
 */
import type { BenchContext } from "./context";
import { type ResultRow, row } from "./report";
import { type WrkResult, wrk } from "./wrk";

type Output = Pick<BenchContext, "progress" | "check" | "log">;

/** One side: a URL and the Host it is asked for. */
export interface Side {
  url: string;
  host: string;
}

/** Pairs of turns: at least six, more when the run asks for more runs. */
export const pairsOfTurns = (runs: number) => Math.max(6, runs * 2);

/** The order of the two sides in pair `i`: `a` first in pairs 0, 3, 4, 7, 8, ... (ABBA). */
export const aFirst = (i: number) => i % 4 === 0 || i % 4 === 3;

export interface InTurns {
  subject: string;
  a: Side;
  b: Side;
  /** What `b` is, as the row's baseline column names it. */
  bName: string;
  pairs: number;
  wrk: { connections: number; seconds: number };
}

/** Loads `a` and `b` in turns; returns the requests/s row (a against b) and its p50 row. */
export async function measureInTurns(m: InTurns, out: Output): Promise<ResultRow[]> {
  const load = (side: Side) => wrk({ url: side.url, headers: { Host: side.host }, ...m.wrk });
  // Warm both: the first requests compile code and fill the proxy's route cache.
  await load(m.a);
  await load(m.b);
  const aRuns: WrkResult[] = [];
  const bRuns: WrkResult[] = [];
  for (let i = 0; i < m.pairs; i++) {
    out.progress(`requests: ${m.subject}, pair ${i + 1}/${m.pairs}`);
    if (aFirst(i)) {
      aRuns.push(await load(m.a));
      bRuns.push(await load(m.b));
    } else {
      bRuns.push(await load(m.b));
      aRuns.push(await load(m.a));
    }
  }
  const clean = (r: WrkResult) => r.errors === 0 && r.non2xx === 0;
  const counts = (runs: WrkResult[]) => runs.map((r) => `${r.requests}/${r.non2xx}/${r.errors}`).join(" ");
  out.check(`${m.subject}: every reply 2xx`, aRuns.every(clean) && bRuns.every(clean), `${counts(aRuns)} | ${counts(bRuns)} (requests/not 2xx/errors)`);
  out.log(`${m.subject}, requests/s ratio of each pair of turns: ${aRuns.map((r, i) => (r.rps / bRuns[i]!.rps).toFixed(2)).join(" ")}`);
  const who = `wrk, ${m.wrk.connections} connections, ${m.pairs} turns each`;
  return [
    row(m.subject, `requests/s (${who})`, aRuns.map((r) => r.rps), m.bName, bRuns.map((r) => r.rps), "higher"),
    row(m.subject, `p50, ms (${who})`, aRuns.map((r) => r.p50), m.bName, bRuns.map((r) => r.p50), "lower"),
  ];
}
