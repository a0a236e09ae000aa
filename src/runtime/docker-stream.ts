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

