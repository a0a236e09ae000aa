/**
 * A container's own output on one Docker Engine (`GET /containers/{id}/logs`), as text or as
 * timestamped lines decoded frame by frame as they arrive (docker-stream.ts).
 */
import type { DockerEngineClient } from "./docker-client";
import { LogStreamDecoder, demultiplexLogs } from "./docker-stream";
import type { LogLine, LogOptions } from "./types";

/** The last `tail` lines as text; a missing container has no logs: "" rather than an error, as after a delete. */
export async function containerLogs(client: DockerEngineClient, id: string, options: { tail?: number } = {}): Promise<string> {
  const tail = options.tail === undefined ? "all" : String(Math.max(0, Math.floor(options.tail)));
  const res = await client.request("GET", `/containers/${encodeURIComponent(id)}/logs`, { query: { stdout: "1", stderr: "1", tail }, accept: [404] });
  const body = new Uint8Array(await res.arrayBuffer());
  return res.ok ? demultiplexLogs(body) : "";
}

/**
 * `GET /containers/{id}/logs?timestamps=1`, decoded frame by frame as it arrives. Following,
 * the engine call stays open until the instance is removed or `signal` aborts, which ends the
 * call (the engine's connection is not left behind). Read lazily: a slow reader slows the engine's
 * stream, never grows a buffer here. Null for a missing container.
 */
export async function containerLogLines(client: DockerEngineClient, id: string, options: LogOptions = {}): Promise<AsyncIterable<LogLine> | null> {
  const query: Record<string, string> = { stdout: "1", stderr: "1", timestamps: "1", follow: options.follow ? "1" : "0" };
  if (options.tail !== undefined) query.tail = String(Math.max(0, Math.floor(options.tail)));
  // The engine takes seconds with a fraction: lines at or after this moment.
  if (options.since !== undefined) query.since = (Math.max(0, options.since) / 1000).toFixed(3);
  const res = await client.request("GET", `/containers/${encodeURIComponent(id)}/logs`, {
    query,
    accept: [404],
    untimed: options.follow === true,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (res.status === 404) {
    await res.arrayBuffer();
    return null;
  }
  return decodeLogLines(res, options.signal);
}

/** The lines of a logs reply as they arrive; stops reading (and ends the engine call) when the reader stops. */
async function* decodeLogLines(res: Response, signal: AbortSignal | undefined): AsyncGenerator<LogLine> {
  const reader = res.body?.getReader();
  if (!reader) return;
  const decoder = new LogStreamDecoder();
  try {
    for (;;) {
      if (signal?.aborted) return;
      const chunk = await reader.read().catch((error: unknown) => {
        if (signal?.aborted) return { done: true as const, value: undefined };
        throw error;
      });
      if (chunk.done) break;
      yield* decoder.push(chunk.value);
    }
    yield* decoder.flush();
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
