/**
 * Pure parsers for the Docker Engine's two streamed formats: the JSON-lines progress stream of
 * `POST /build` and the multiplexed stdout/stderr frames of `GET /containers/{id}/logs`.
 * No I/O here, so the rules are unit-tested without an engine.
 */

/** Splits text that arrives in arbitrary chunks into JSON values, one per line. */
export class JsonLinesDecoder {
  private pending = "";

  /** Feeds a chunk; returns the values of the lines it completed. Unparseable lines are skipped. */
  push(chunk: string): unknown[] {
    this.pending += chunk;
    const lines = this.pending.split("\n");
    this.pending = lines.pop() ?? "";
    return parseLines(lines);
  }

  /** The value on a last line that had no newline, if any. */
  flush(): unknown[] {
    const rest = this.pending;
    this.pending = "";
    return parseLines([rest]);
  }
}

function parseLines(lines: string[]): unknown[] {
  const values: unknown[] = [];
  for (const line of lines) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    try {
      values.push(JSON.parse(trimmed));
    } catch {
      // The engine writes only JSON here; a broken line is noise, not a reason to fail the build.
    }
  }
  return values;
}

/** What one build-stream message means for the caller. */
export interface BuildEvent {
  /** Whole lines of build output to show, when the message completed any. */
  text?: string;
  /** The engine's error sentence, when the build failed. */
  error?: string;
}

const STEP_LINE = /^Step \d+\/\d+ : /;

/**
 * Follows one build's progress messages: turns `{stream}` fragments into whole lines, remembers
 * the last `Step N/M : ...` line (the failing step when an error follows), and the image id.
 */
export class BuildProgress {
  /** The last step line seen, e.g. `Step 3/5 : RUN make`. */
  lastStep: string | undefined;
  /** The built image's id from `{aux: {ID}}`. */
  imageId: string | undefined;
  /** The first error the engine reported. */
  error: string | undefined;
  private partial = "";

  /** Takes one decoded JSON-lines message. */
  feed(message: unknown): BuildEvent {
    if (!message || typeof message !== "object") return {};
    const m = message as { stream?: unknown; error?: unknown; errorDetail?: { message?: unknown }; aux?: { ID?: unknown } };
    if (m.aux && typeof m.aux.ID === "string") this.imageId = m.aux.ID;
    if (typeof m.stream === "string") return this.takeText(m.stream);
    const error = typeof m.error === "string" ? m.error : typeof m.errorDetail?.message === "string" ? m.errorDetail.message : undefined;
    if (error === undefined) return {};
    this.error ??= error;
    // A step line the engine left without its newline still belongs before the error.
    const flushed = this.finish();
    return { text: `${flushed ?? ""}${error}\n`, error };
  }

  /** Output held back waiting for a newline, as a final line; call when the stream ends. */
  finish(): string | undefined {
    if (!this.partial) return undefined;
    const rest = this.partial;
    this.partial = "";
    this.noteSteps([rest]);
    return `${rest}\n`;
  }

  private takeText(fragment: string): BuildEvent {
    // Docker sends `Step 1/4 : FROM scratch` and its `\n` as two messages; hold text until a newline.
    const joined = this.partial + fragment;
    const cut = joined.lastIndexOf("\n");
    if (cut < 0) {
      this.partial = joined;
      return {};
    }
    this.partial = joined.slice(cut + 1);
    const text = joined.slice(0, cut + 1);
    this.noteSteps(text.split("\n"));
    return { text };
  }

  private noteSteps(lines: string[]): void {
    for (const line of lines) if (STEP_LINE.test(line)) this.lastStep = line.trimEnd();
  }
}

/** The 8-byte header before each frame of a non-TTY container's attach or logs stream. */
const FRAME_HEADER = 8;

/**
 * Turns a logs body into text. A container without a TTY sends frames `[stream, 0, 0, 0, size(4,
 * big-endian)] payload` with stream 1 = stdout, 2 = stderr; a TTY container sends raw text.
 */
export function demultiplexLogs(body: Uint8Array): string {
  if (!looksMultiplexed(body)) return new TextDecoder().decode(body);
  const decoder = new TextDecoder();
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let text = "";
  let offset = 0;
  while (offset + FRAME_HEADER <= body.length) {
    const size = view.getUint32(offset + 4);
    const end = Math.min(offset + FRAME_HEADER + size, body.length);
    text += decoder.decode(body.subarray(offset + FRAME_HEADER, end), { stream: true });
    offset = end;
  }
  return text + decoder.decode();
}

function looksMultiplexed(body: Uint8Array): boolean {
  if (body.length < FRAME_HEADER) return false;
  return (body[0] === 0 || body[0] === 1 || body[0] === 2) && body[1] === 0 && body[2] === 0 && body[3] === 0;
}

/** Builds one frame of the multiplexed format; the inverse of `demultiplexLogs`, used by fakes. */
export function logFrame(stream: 1 | 2, payload: Uint8Array): Uint8Array {
  const frame = new Uint8Array(FRAME_HEADER + payload.length);
  frame[0] = stream;
  new DataView(frame.buffer).setUint32(4, payload.length);
  frame.set(payload, FRAME_HEADER);
  return frame;
}


/** Longest line kept whole; the rest of a longer line is cut and marked (a flood of one line stays bounded). */
export const MAX_LOG_LINE_CHARS = 16 * 1024;
const CUT_MARK = " [line cut]";

/** One decoded line of a `logs?timestamps=1` stream. */
export interface TimestampedLine {
  /** ms since the epoch, from the engine's RFC 3339 timestamp (0 when it had none). */
  at: number;
  stream: "stdout" | "stderr";
  text: string;
}

/**
 * Decodes a logs stream as it arrives, in arbitrary chunks: frame headers split across chunks,
 * frames holding several lines or part of one, stdout and stderr each with its own pending line.
 * With `timestamps=1` the engine starts each line with `2026-11-24T00:14:01.123456789Z `. A line
 * longer than MAX_LOG_LINE_CHARS is cut there; bytes that are not UTF-8 become U+FFFD.
 */
export class LogStreamDecoder {
  private buffer: Uint8Array = new Uint8Array(0);
  private raw: boolean | undefined;
  private readonly pending = { stdout: new PendingLine(), stderr: new PendingLine() };

  /** Feeds a chunk; returns the lines it completed. */
  push(chunk: Uint8Array): TimestampedLine[] {
    this.buffer = this.buffer.length === 0 ? chunk : concat(this.buffer, chunk);
    if (this.raw === undefined) {
      if (this.buffer.length < FRAME_HEADER) return [];
      this.raw = !looksMultiplexed(this.buffer);
    }
    const out: TimestampedLine[] = [];
    if (this.raw) {
      this.pending.stdout.feed(this.buffer, "stdout", out);
      this.buffer = new Uint8Array(0);
      return out;
    }
    let offset = 0;
    const view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
    while (offset + FRAME_HEADER <= this.buffer.length) {
      const size = view.getUint32(offset + 4);
      if (offset + FRAME_HEADER + size > this.buffer.length) break;
      const stream = this.buffer[offset] === 2 ? "stderr" : "stdout";
      this.pending[stream].feed(this.buffer.subarray(offset + FRAME_HEADER, offset + FRAME_HEADER + size), stream, out);
      offset += FRAME_HEADER + size;
    }
    this.buffer = this.buffer.slice(offset);
    return out;
  }

  /** Lines left without a newline when the stream ends. */
  flush(): TimestampedLine[] {
    const out: TimestampedLine[] = [];
    if (this.raw === undefined && this.buffer.length > 0) this.pending.stdout.feed(this.buffer, "stdout", out);
    this.buffer = new Uint8Array(0);
    this.pending.stdout.end("stdout", out);
    this.pending.stderr.end("stderr", out);
    return out;
  }
}

class PendingLine {
  private readonly decoder = new TextDecoder();
  private text = "";
  private cut = false;

  feed(bytes: Uint8Array, stream: TimestampedLine["stream"], out: TimestampedLine[]): void {
    const parts = this.decoder.decode(bytes, { stream: true }).split("\n");
    for (let i = 0; i < parts.length; i++) {
      this.add(parts[i]!);
      if (i < parts.length - 1) this.emit(stream, out);
    }
  }

  end(stream: TimestampedLine["stream"], out: TimestampedLine[]): void {
    this.add(this.decoder.decode());
    if (this.text || this.cut) this.emit(stream, out);
  }

  private add(part: string): void {
    if (this.cut) return;
    // The timestamp prefix counts toward the limit; a few dozen characters more are harmless.
    const room = MAX_LOG_LINE_CHARS + TIMESTAMP_ROOM - this.text.length;
    if (part.length > room) {
      this.text += part.slice(0, room);
      this.cut = true;
    } else this.text += part;
  }

  private emit(stream: TimestampedLine["stream"], out: TimestampedLine[]): void {
    out.push({ stream, ...splitTimestamp(this.text.replace(/\r$/, ""), this.cut) });
    this.text = "";
    this.cut = false;
  }
}

const TIMESTAMP_ROOM = 40;
const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d) ?/;

/** `2026-11-24T00:14:01.123456789Z text` -> at (ms) and text; no timestamp: at 0. */
export function splitTimestamp(line: string, cut = false): { at: number; text: string } {
  const m = TIMESTAMP.exec(line);
  let at = 0;
  let text = line;
  if (m) {
    const millis = m[2] ? m[2].slice(0, 4).padEnd(4, "0") : "";
    const parsed = Date.parse(`${m[1]}${millis}${m[3]}`);
    if (!Number.isNaN(parsed)) {
      at = parsed;
      text = line.slice(m[0].length);
    }
  }
  if (text.length > MAX_LOG_LINE_CHARS) {
    text = text.slice(0, MAX_LOG_LINE_CHARS);
    cut = true;
  }
  return { at, text: cut ? `${text}${CUT_MARK}` : text };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
