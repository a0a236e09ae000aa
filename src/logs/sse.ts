/**
 * The live log stream as Server-Sent Events: one event per line (`id` = the line's cursor, `data`
 * = the JSON line), a comment every HEARTBEAT_MS so proxies keep the connection, and `retry` so
 * a dropped client comes back within a second. Lines are pulled from the engine only as fast as
 * the client reads them (a slow client slows the engine's stream; nothing piles up here), and a
 * client that goes away ends the engine call.
 */
import type { LogLine } from "../runtime/types";
import { LogIds } from "./cursor";
import { maskLine } from "./mask";

export const HEARTBEAT_MS = 15_000;
export const RETRY_MS = 1_000;

export interface LogStreamOptions {
  ids: LogIds;
  secrets: readonly string[];
  /** Aborted when the client goes away: ends the engine call. */
  engineCall: AbortController;
  heartbeatMs?: number;
  /** Called once when the stream ends, whichever side ended it (its lease is given back). */
  onEnd?: () => void;
}

/** The SSE body for an engine's follow stream (or for none: a stream that asks to retry later). */
export function logEventStream(lines: AsyncIterable<LogLine> | null, options: LogStreamOptions): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = lines?.[Symbol.asyncIterator]();
  let next: Promise<IteratorResult<LogLine>> | null = null;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    options.onEnd?.();
  };
  /** One event (or a keep-alive comment) for the client, or the end of the stream. */
  async function pullOne(source: AsyncIterator<LogLine>, controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    for (;;) {
      if (!next) {
        next = source.next();
        // Cancelled meanwhile, the engine call ends in an error nobody waits for any more.
        next.catch(() => undefined);
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const beat = new Promise<"beat">((resolve) => (timer = setTimeout(() => resolve("beat"), options.heartbeatMs ?? HEARTBEAT_MS)));
      const got = await Promise.race([next, beat]).finally(() => clearTimeout(timer));
      if (got === "beat") return controller.enqueue(encoder.encode(": keep-alive\n\n"));
      next = null;
      if (got.done) {
        end();
        return controller.close();
      }
      const id = options.ids.next(got.value);
      if (id === null) continue;
      return controller.enqueue(encoder.encode(logEvent(id, { ...got.value, text: maskLine(got.value.text, options.secrets) })));
    }
  }
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode(`retry: ${iterator ? RETRY_MS : RETRY_MS * 5}\n\n`));
        if (!iterator) {
          controller.close();
          end();
        }
      },
      async pull(controller) {
        if (!iterator) return;
        try {
          await pullOne(iterator, controller);
        } catch (err) {
          end();
          throw err;
        }
      },
      cancel() {
        end();
        options.engineCall.abort();
        void iterator?.return?.(undefined).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/** One event: JSON keeps the line on one `data:` line whatever it holds. */
export function logEvent(id: string, line: LogLine): string {
  return `id: ${id}\ndata: ${JSON.stringify({ at: line.at, stream: line.stream, text: line.text })}\n\n`;
}
