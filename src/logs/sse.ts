/**
 * Pieces of the live log stream's Server-Sent Events: one event per line (`id` = the line's
 * cursor, `data` = the JSON line), a comment every HEARTBEAT_MS so proxies keep the connection,
 * and `retry` so a dropped client comes back within a second. The events of an instance's stream
 * are made once and shared by all its viewers (live-feed.ts).
 */
import type { LogLine } from "../runtime/types";

export const HEARTBEAT_MS = 15_000;
export const RETRY_MS = 1_000;

/** The body for an app with no instance to follow: come back in a few seconds. */
export function retryLaterStream(): ReadableStream<Uint8Array> {
  return new Response(`retry: ${RETRY_MS * 5}\n\n`).body!;
}

/**
 * `source` passed on as it is read, with `onEnd` called once when it ends, whichever side ended
 * it (a client that goes away cancels the source).
 */
export function relayStream(source: ReadableStream<Uint8Array>, onEnd: () => void): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const chunk = await reader.read();
          if (!chunk.done) return controller.enqueue(chunk.value);
          end();
          controller.close();
        } catch (error) {
          end();
          throw error;
        }
      },
      cancel(reason) {
        end();
        return reader.cancel(reason).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/** One event: JSON keeps the line on one `data:` line whatever it holds. */
export function logEvent(id: string, line: LogLine): string {
  return `id: ${id}\ndata: ${JSON.stringify({ at: line.at, stream: line.stream, text: line.text })}\n\n`;
}
