/** Reading the manager's streamed replies: service and task logs, and a push's JSON lines. */
import type { DockerEngineClient } from "./docker-client";
import { JsonLinesDecoder, demultiplexLogs } from "./docker-stream";
import { ServiceLogDecoder, serviceLogQuery } from "./swarm-logs";
import type { LogLine, LogOptions } from "./types";

/** How often a followed service log looks whether its service still exists. */
const FOLLOW_CHECK_MS = 1000;

/** Every task's output (tasks on any node) as text, the last `tail` lines; a missing service has none. */
export async function serviceLogs(client: DockerEngineClient, id: string, options: { tail?: number } = {}): Promise<string> {
  const tail = options.tail === undefined ? "all" : String(Math.max(0, Math.floor(options.tail)));
  const res = await client.request("GET", `/services/${encodeURIComponent(id)}/logs`, { query: { stdout: "1", stderr: "1", tail }, accept: [404], untimed: true });
  const body = await readQuietEnd(res.body);
  return res.ok ? demultiplexLogs(body) : "";
}

/** One finished task's output (the start-up report's probe), as text. */
export async function taskLogs(client: DockerEngineClient, taskId: string): Promise<string> {
  const res = await client.request("GET", `/tasks/${encodeURIComponent(taskId)}/logs`, { query: { stdout: "1", stderr: "1" }, accept: [404], untimed: true });
  const body = await readQuietEnd(res.body);
  return res.ok ? demultiplexLogs(body) : "";
}

/**
 * Every task's output as timestamped lines (`/services/{id}/logs`, tasks on any node); with
 * `follow`, lines as they are printed until `signal` aborts. Null for a missing service. A manager
 * keeps a followed service's log call open after the service is removed, so a follower also ends
 * when `exists` says the service is gone (asked every FOLLOW_CHECK_MS).
 */
export async function serviceLogLines(client: DockerEngineClient, id: string, options: LogOptions, exists: () => Promise<boolean>): Promise<AsyncIterable<LogLine> | null> {
  const ended = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, ended.signal]) : ended.signal;
  const res = await client.request("GET", `/services/${encodeURIComponent(id)}/logs`, {
    query: serviceLogQuery(options),
    accept: [404],
    ...(options.follow ? { untimed: true } : {}),
    signal,
  });
  if (res.status === 404) {
    await res.arrayBuffer();
    return null;
  }
  if (options.follow) void endWhenGone(exists, ended, signal);
  return decodeServiceLines(res.body, signal, () => ended.abort());
}

/** Aborts `ended` once the service no longer exists; stops looking when `signal` aborts. */
async function endWhenGone(exists: () => Promise<boolean>, ended: AbortController, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_CHECK_MS));
    if (signal.aborted) return;
    if ((await exists().catch(() => true)) === false) ended.abort();
  }
}

/** A service logs reply without `follow` that sends nothing for this long has sent everything. */
const LOGS_QUIET_MS = 3000;

/**
 * A service logs body read to its end, or until it has been quiet for LOGS_QUIET_MS: the manager
 * gathers the lines from every task's node and, on Docker 20.10, may keep the reply open after
 * the last one even without `follow`.
 */
export async function readQuietEnd(body: ReadableStream<Uint8Array> | null): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const quiet = new Promise<"quiet">((resolve) => (timer = setTimeout(() => resolve("quiet"), LOGS_QUIET_MS)));
      const next = await Promise.race([reader.read(), quiet]).finally(() => clearTimeout(timer));
      if (next === "quiet" || next.done) break;
      parts.push(next.value);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/** A service logs body as lines while it lasts; `done` runs however the stream ended. */
export async function* decodeServiceLines(body: ReadableStream<Uint8Array> | null, signal: AbortSignal, done: () => void): AsyncIterable<LogLine> {
  if (!body) return done();
  const decoder = new ServiceLogDecoder();
  const reader = body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* decoder.push(value);
    }
    yield* decoder.flush();
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    signal.removeEventListener("abort", stop);
    // Whatever ended the stream (its end, the reader, the service gone), the lookups stop too.
    done();
    await reader.cancel().catch(() => undefined);
  }
}

export async function readJsonLines(res: Response): Promise<unknown[]> {
  const lines = new JsonLinesDecoder();
  return [...lines.push(await res.text()), ...lines.flush()];
}
