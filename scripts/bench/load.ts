/**
 * A small closed-loop load driver: N clients, each sending its next request as soon as the last
 * reply has been read, over keep-alive connections (node:http, one socket per client).
 */
import { Agent, request } from "node:http";

/** One request a client sends. */
export interface LoadRequest {
  method: "GET" | "POST";
  url: string;
  headers?: Record<string, string>;
}

/** What one load run saw. */
export interface LoadResult {
  /** Latency of each reply whose status was counted, ms. */
  latenciesMs: number[];
  /** Replies by status (all of them, counted or not). */
  statuses: Record<number, number>;
  seconds: number;
}

export interface LoadOptions {
  clients: number;
  requestsPerClient: number;
  /** The i-th request of client c. */
  next: (client: number, i: number) => LoadRequest;
  /** Replies with this status are counted as latency samples; a client stops at any other. */
  status: number;
  /** Receives the body of each counted reply. */
  onBody?: (body: string) => void;
}

/**
 * Sends one request; resolves with its status and latency once the whole body has arrived. A
 * reply that is not a sample (e.g. the archive itself once an export is ready) is not read: its
 * connection is dropped instead.
 */
function send(agent: Agent, req: LoadRequest, sampleStatus: number): Promise<{ status: number; ms: number; body: string }> {
  return new Promise((ok, fail) => {
    const started = performance.now();
    const r = request(req.url, { method: req.method, headers: req.headers, agent }, (res) => {
      const status = res.statusCode ?? 0;
      if (status !== sampleStatus) {
        res.destroy();
        ok({ status, ms: performance.now() - started, body: "" });
        return;
      }
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => ok({ status, ms: performance.now() - started, body }));
      res.on("error", fail);
    });
    r.on("error", fail);
    r.end();
  });
}

/** Runs the load; every client sends up to `requestsPerClient` requests. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.clients });
  const latenciesMs: number[] = [];
  const statuses: Record<number, number> = {};
  const started = performance.now();
  const client = async (c: number) => {
    for (let i = 0; i < options.requestsPerClient; i++) {
      const { status, ms, body } = await send(agent, options.next(c, i), options.status);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status !== options.status) return;
      latenciesMs.push(ms);
      options.onBody?.(body);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.clients }, (_, c) => client(c)));
  } finally {
    agent.destroy();
  }
  return { latenciesMs, statuses, seconds: (performance.now() - started) / 1000 };
}

/** The p-th percentile (0..100) by nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
