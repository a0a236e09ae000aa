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

/** One reply: its status, body and latency (request sent to last byte read), ms. */
export interface Reply {
  status: number;
  ms: number;
  body: string;
}

/** What one load run saw. */
export interface LoadResult {
  replies: Reply[];
  seconds: number;
}

export interface LoadOptions {
  clients: number;
  requestsPerClient: number;
  /** The i-th request of client c. */
  next: (client: number, i: number) => LoadRequest;
  /** A client goes on while its replies pass this test (default: always). */
  goOn?: (status: number) => boolean;
}

function send(agent: Agent, req: LoadRequest): Promise<Reply> {
  return new Promise((ok, fail) => {
    const started = performance.now();
    const r = request(req.url, { method: req.method, headers: req.headers, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => ok({ status: res.statusCode ?? 0, ms: performance.now() - started, body }));
      res.on("error", fail);
    });
    r.on("error", fail);
    r.end();
  });
}

/** Runs the load; every client sends up to `requestsPerClient` requests. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.clients });
  const replies: Reply[] = [];
  const started = performance.now();
  const client = async (c: number) => {
    for (let i = 0; i < options.requestsPerClient; i++) {
      const reply = await send(agent, options.next(c, i));
      replies.push(reply);
      if (options.goOn && !options.goOn(reply.status)) return;
    }
  };
  try {
    await Promise.all(Array.from({ length: options.clients }, (_, c) => client(c)));
  } finally {
    agent.destroy();
  }
  return { replies, seconds: (performance.now() - started) / 1000 };
}

/** Replies counted by status, e.g. `48x503 2x206`. */
export function statusCounts(replies: Reply[]): string {
  const counts = new Map<number, number>();
  for (const r of replies) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return [...counts].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${n}x${s}`).join(" ");
}

/** The p-th percentile (0..100) by nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
