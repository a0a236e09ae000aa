/**
 * Load runs with wrk (Debian's `wrk`): a fixed number of keep-alive connections for a fixed time,
 * measured by wrk itself, so the figures are the server's and not a Node load loop's.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

export interface WrkRun {
  url: string;
  connections: number;
  seconds: number;
  headers?: Record<string, string>;
}

/** What one wrk run measured. */
export interface WrkResult {
  requests: number;
  rps: number;
  /** Latency percentiles, ms. */
  p50: number;
  p99: number;
  /** Replies that were not 2xx or 3xx. */
  non2xx: number;
  /** Connect, read, write and timeout errors together. */
  errors: number;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** `1.23ms` -> 1.23. */
function ms(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!match) throw new Error(`wrk printed a latency it is not known to print: ${text}`);
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

/** Reads wrk's `--latency` report. */
export function parseWrk(out: string): WrkResult {
  const percentile = (p: number) => {
    const match = new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m").exec(out);
    if (!match) throw new Error(`no ${p}th percentile in wrk's report:\n${out}`);
    return ms(match[1]!);
  };
  const requests = Number(/^\s+(\d+) requests in/m.exec(out)?.[1] ?? Number.NaN);
  const rps = Number(/^Requests\/sec:\s+([\d.]+)/m.exec(out)?.[1] ?? Number.NaN);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  return { requests, rps, p50: percentile(50), p99: percentile(99), non2xx, errors };
}

/** One wrk run (two threads, one per core of the bench machine at most). */
export async function wrk(run: WrkRun): Promise<WrkResult> {
  const headers = Object.entries(run.headers ?? {}).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);
  const threads = String(Math.min(2, run.connections));
  const { stdout } = await promisify(execFile)(
    "wrk",
    ["-t", threads, "-c", String(run.connections), "-d", `${run.seconds}s`, "--timeout", "30s", "--latency", ...headers, run.url],
    { maxBuffer: 1024 * 1024 },
  );
  return parseWrk(stdout);
}
