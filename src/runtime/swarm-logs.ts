/**
 * Service logs (`GET /services/{id}/logs?timestamps=1`) as timestamped lines. The engine sends
 * the multiplexed format (frames `[stream, 0, 0, 0, size(4, big-endian)] payload`, 1 = stdout,
 * 2 = stderr), each payload one or more lines beginning with the engine's RFC 3339 timestamp.
 * Frames may be cut anywhere by the transport, and a line may span frames: both are put together
 * again here. Pure (no I/O), so the decoding is tested on its own.
 */
import type { LogLine } from "./types";

const HEADER = 8;
/** `2026-11-24T00:20:00.123456789Z text`: the engine's timestamp, then one space. */
const STAMPED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d) ?/;

/** Milliseconds since the epoch of an engine timestamp (nanoseconds cut to milliseconds), or null. */
export function parseEngineTime(stamp: string): number | null {
  const m = STAMPED.exec(stamp);
  if (!m) return null;
  const ms = (m[2] ?? ".0").slice(0, 4).padEnd(4, "0");
  const at = Date.parse(`${m[1]}${ms}${m[3]}`);
  return Number.isNaN(at) ? null : at;
}

/** One line of output split from its timestamp; a line without one gets `fallback`. */
export function stampedLine(raw: string, stream: LogLine["stream"], fallback: number): LogLine {
  const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  const m = STAMPED.exec(line);
  const at = m ? parseEngineTime(m[0].trimEnd()) : null;
  return at === null ? { at: fallback, stream, text: line } : { at, stream, text: line.slice(m![0].length) };
}

export class ServiceLogDecoder {
  #pending = new Uint8Array(0);
  readonly #partial: Record<LogLine["stream"], string> = { stdout: "", stderr: "" };
  readonly #text = { stdout: new TextDecoder(), stderr: new TextDecoder() };

  constructor(private readonly now: () => number = Date.now) {}

  /** The whole lines completed by `chunk`. */
  push(chunk: Uint8Array): LogLine[] {
    const bytes = new Uint8Array(this.#pending.length + chunk.length);
    bytes.set(this.#pending);
    bytes.set(chunk, this.#pending.length);
    const view = new DataView(bytes.buffer);
    const lines: LogLine[] = [];
    let offset = 0;
    while (offset + HEADER <= bytes.length) {
      const size = view.getUint32(offset + 4);
      if (offset + HEADER + size > bytes.length) break;
      const stream = bytes[offset] === 2 ? "stderr" : "stdout";
      const text = this.#partial[stream] + this.#text[stream].decode(bytes.subarray(offset + HEADER, offset + HEADER + size), { stream: true });
      const parts = text.split("\n");
      this.#partial[stream] = parts.pop()!;
      for (const part of parts) lines.push(stampedLine(part, stream, this.now()));
      offset += HEADER + size;
    }
    this.#pending = bytes.slice(offset);
    return lines;
  }

  /** Lines left without their newline when the stream ended. */
  flush(): LogLine[] {
    const lines: LogLine[] = [];
    for (const stream of ["stdout", "stderr"] as const) {
      const rest = this.#partial[stream] + this.#text[stream].decode();
      this.#partial[stream] = "";
      if (rest !== "") lines.push(stampedLine(rest, stream, this.now()));
    }
    return lines;
  }
}

/** The query of a service logs call for these options (`since` in seconds, as the engine takes it). */
export function serviceLogQuery(options: { follow?: boolean; since?: number; tail?: number }): Record<string, string> {
  const query: Record<string, string> = { stdout: "1", stderr: "1", timestamps: "1" };
  if (options.follow) query.follow = "1";
  if (options.since !== undefined) query.since = (Math.max(0, options.since) / 1000).toFixed(3);
  if (options.tail !== undefined) query.tail = String(Math.max(0, Math.floor(options.tail)));
  return query;
}
