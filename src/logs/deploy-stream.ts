/**
 * A deploy's log as Server-Sent Events while the deploy runs: each line of each new part, as it
 * is written (parts are polled every POLL_MS), then `event: end` once the deploy is over and
 * every part is sent. An event's id is `<part>:<line>`, so a reconnect resumes after it.
 */
import { deployLogParts } from "../apps/deploy-log";
import { HEARTBEAT_MS, RETRY_MS } from "./sse";

export const POLL_MS = 1_000;

export interface DeployStreamSource {
  bucket: R2Bucket;
  appId: string;
  deployId: string;
  /** Whether the deploy still runs (more parts may come). */
  running: () => Promise<boolean>;
  /** `Last-Event-ID`. */
  resume: string | null;
}

/** `<part name>:<line index>` of the last line the client has, or null. */
export function parseDeployEventId(value: string | null | undefined): { part: string; line: number } | null {
  const m = /^([0-9]{1,15}-[0-9]{6}\.log):(\d{1,9})$/.exec(value?.trim() ?? "");
  return m ? { part: m[1]!, line: Number(m[2]) } : null;
}

export function deployLogEventStream(source: DeployStreamSource): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const prefix = `apps/${source.appId}/deploys/${source.deployId}/`;
  const resume = parseDeployEventId(source.resume);
  let after = resume ? `${prefix}${resume.part}` : undefined;
  let skipLines = resume ? resume.line + 1 : 0;
  let resumedPart = resume ? `${prefix}${resume.part}` : null;
  let queue: string[] = [];
  let quietSince = Date.now();
  let closed = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode(`retry: ${RETRY_MS}\n\n`));
      },
      async pull(controller) {
        while (queue.length === 0) {
          if (closed) return;
          // Whether it ran before listing: a part written just before the end is still listed.
          const running = await source.running();
          if (resumedPart) {
            // The rest of the part the client was reading.
            queue.push(...(await partEvents(source.bucket, resumedPart, skipLines)));
            resumedPart = null;
          }
          for (const key of await deployLogParts(source.bucket, source.appId, source.deployId, after)) {
            queue.push(...(await partEvents(source.bucket, key, 0)));
            after = key;
          }
          skipLines = 0;
          if (queue.length > 0) break;
          if (!running) {
            closed = true;
            controller.enqueue(encoder.encode("event: end\ndata: {}\n\n"));
            return controller.close();
          }
          if (Date.now() - quietSince >= HEARTBEAT_MS) {
            quietSince = Date.now();
            return controller.enqueue(encoder.encode(": keep-alive\n\n"));
          }
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
        quietSince = Date.now();
        const events = queue;
        queue = [];
        controller.enqueue(encoder.encode(events.join("")));
      },
      cancel() {
        closed = true;
      },
    },
    { highWaterMark: 0 },
  );
}

async function partEvents(bucket: R2Bucket, key: string, from: number): Promise<string[]> {
  const object = await bucket.get(key);
  if (!object) return [];
  const name = key.slice(key.lastIndexOf("/") + 1);
  const at = object.uploaded.getTime();
  const lines = (await object.text()).split("\n");
  if (lines.at(-1) === "") lines.pop();
  const events: string[] = [];
  for (let i = from; i < lines.length; i++) {
    events.push(`id: ${name}:${i}\ndata: ${JSON.stringify({ at, stream: "stdout", text: lines[i] })}\n\n`);
  }
  return events;
}
