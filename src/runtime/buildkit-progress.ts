/**
 * BuildKit's progress on `POST /build?version=2`, as readable lines. The engine sends JSON lines;
 * the `moby.buildkit.trace` ones carry a base64 protobuf `StatusResponse` (moby/buildkit
 * api/services/control/control.proto): vertexes (build steps) as they start, hit the cache, finish
 * or fail, statuses (transfers, layer exports) and the steps' own output. This reads those few
 * messages with a small protobuf reader (no generated code, runs in workerd) and prints them as
 * `buildctl --progress=plain` does: `#3 [2/3] RUN make`, `#3 <output line>`, `#3 DONE 0.4s`,
 * `#3 CACHED`, `#3 ERROR: ...`. Pure: no I/O.
 */
import { fromBase64 } from "../lib/encoding";

export interface BuildKitVertex {
  digest: string;
  name: string;
  cached: boolean;
  /** ms since the epoch, when known. */
  started?: number;
  completed?: number;
  error?: string;
}

export interface BuildKitStatus {
  id: string;
  vertex: string;
  name: string;
  current: number;
  total: number;
  completed?: number;
}

export interface BuildKitLog {
  vertex: string;
  /** 1 stdout, 2 stderr. */
  stream: number;
  data: Uint8Array;
}

export interface StatusResponse {
  vertexes: BuildKitVertex[];
  statuses: BuildKitStatus[];
  logs: BuildKitLog[];
}

/** A protobuf message's fields: number -> values in order (varints as numbers, the rest as bytes). */
type Fields = Map<number, (number | Uint8Array)[]>;

/** Reads one protobuf message's top-level fields. Throws on a truncated or malformed message. */
export function readFields(bytes: Uint8Array): Fields {
  const fields: Fields = new Map();
  let offset = 0;
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (offset >= bytes.length) throw new Error("truncated varint");
      const byte = bytes[offset++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    throw new Error("varint too long");
  };
  const take = (length: number): Uint8Array => {
    if (length < 0 || offset + length > bytes.length) throw new Error("truncated field");
    const slice = bytes.subarray(offset, offset + length);
    offset += length;
    return slice;
  };
  while (offset < bytes.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    let value: number | Uint8Array;
    if (wire === 0) value = varint();
    else if (wire === 2) value = take(varint());
    else if (wire === 1) value = take(8);
    else if (wire === 5) value = take(4);
    else throw new Error(`unsupported wire type ${wire}`);
    const list = fields.get(field);
    if (list) list.push(value);
    else fields.set(field, [value]);
  }
  return fields;
}

const text = new TextDecoder();

function str(fields: Fields, n: number): string {
  const v = fields.get(n)?.[0];
  return v instanceof Uint8Array ? text.decode(v) : "";
}

function num(fields: Fields, n: number): number {
  const v = fields.get(n)?.[0];
  return typeof v === "number" ? v : 0;
}

function bytesOf(fields: Fields, n: number): Uint8Array {
  const v = fields.get(n)?.[0];
  return v instanceof Uint8Array ? v : new Uint8Array();
}

function messages(fields: Fields, n: number): Fields[] {
  return (fields.get(n) ?? []).filter((v): v is Uint8Array => v instanceof Uint8Array).map(readFields);
}

/** google.protobuf.Timestamp {seconds = 1, nanos = 2} as ms, or undefined when absent. */
function timestamp(fields: Fields, n: number): number | undefined {
  const v = fields.get(n)?.[0];
  if (!(v instanceof Uint8Array)) return undefined;
  const t = readFields(v);
  return num(t, 1) * 1000 + Math.floor(num(t, 2) / 1e6);
}

/**
 * Decodes one StatusResponse: vertexes = 1 {digest 1, name 3, cached 4, started 5, completed 6,
 * error 7}, statuses = 2 {ID 1, vertex 2, name 3, current 4, total 5, completed 8}, logs = 3
 * {vertex 1, stream 3, msg 4}. Unknown fields are skipped.
 */
export function decodeStatusResponse(bytes: Uint8Array): StatusResponse {
  const top = readFields(bytes);
  return {
    vertexes: messages(top, 1).map((v) => {
      const started = timestamp(v, 5);
      const completed = timestamp(v, 6);
      const error = str(v, 7);
      return {
        digest: str(v, 1),
        name: str(v, 3),
        cached: num(v, 4) === 1,
        ...(started === undefined ? {} : { started }),
        ...(completed === undefined ? {} : { completed }),
        ...(error ? { error } : {}),
      };
    }),
    statuses: messages(top, 2).map((s) => {
      const completed = timestamp(s, 8);
      return { id: str(s, 1), vertex: str(s, 2), name: str(s, 3), current: num(s, 4), total: num(s, 5), ...(completed === undefined ? {} : { completed }) };
    }),
    logs: messages(top, 3).map((l) => ({ vertex: str(l, 1), stream: num(l, 3), data: bytesOf(l, 4) })),
  };
}

/** What one message of the build stream means for the caller (same shape as the classic builder's). */
export interface BuildKitEvent {
  text?: string;
  error?: string;
}

/** A step printing without a newline is cut into lines of at most this many characters. */
export const MAX_PARTIAL_LINE = 16 * 1024;

interface VertexState {
  number: number;
  name: string;
  announced: boolean;
  cached: boolean;
  done: boolean;
  partial: string;
  decoder: TextDecoder;
  statusesDone: Set<string>;
}

/**
 * Follows one BuildKit build: numbers the steps in the order they appear, prints each once when it
 * starts, its output line by line, and once when it is cached, done or failed. Remembers the step
 * that failed (its name, e.g. `[2/3] RUN make`), the engine's error sentence and the image id.
 */
export class BuildKitProgress {
  lastStep: string | undefined;
  imageId: string | undefined;
  error: string | undefined;
  private readonly vertexes = new Map<string, VertexState>();

  /** Takes one decoded JSON-lines message of the build stream. */
  feed(message: unknown): BuildKitEvent {
    if (!message || typeof message !== "object") return {};
    const m = message as { id?: unknown; aux?: unknown; stream?: unknown; error?: unknown; errorDetail?: { message?: unknown } };
    if (m.id === "moby.image.id" && m.aux && typeof (m.aux as { ID?: unknown }).ID === "string") {
      this.imageId = (m.aux as { ID: string }).ID;
      return {};
    }
    if (m.id === "moby.buildkit.trace" && typeof m.aux === "string") {
      let status: StatusResponse;
      try {
        status = decodeStatusResponse(fromBase64(m.aux));
      } catch {
        // A message we cannot read is progress noise, never a reason to fail the build.
        return {};
      }
      const out = this.apply(status);
      return out ? { text: out } : {};
    }
    if (typeof m.stream === "string") return m.stream ? { text: m.stream.endsWith("\n") ? m.stream : `${m.stream}\n` } : {};
    const error = typeof m.error === "string" ? m.error : typeof m.errorDetail?.message === "string" ? m.errorDetail.message : undefined;
    if (error === undefined) return {};
    this.error ??= error;
    const flushed = this.finish() ?? "";
    return { text: `${flushed}${error}\n`, error };
  }

  /** Output still waiting for a newline, as final lines; call when the stream ends. */
  finish(): string | undefined {
    let out = "";
    for (const v of this.vertexes.values()) out += this.flushPartial(v);
    return out || undefined;
  }

  private apply(status: StatusResponse): string {
    let out = "";
    // Starts first, then transfers and output, then ends: a step's lines sit between its header and its DONE.
    for (const vertex of status.vertexes) out += this.onStart(vertex);
    for (const s of status.statuses) {
      const v = this.vertexes.get(s.vertex);
      if (!v || s.completed === undefined || v.statusesDone.has(s.id)) continue;
      v.statusesDone.add(s.id);
      out += `#${v.number} ${s.name || s.id}${s.total ? ` ${s.current}/${s.total}` : ""} done\n`;
    }
    for (const log of status.logs) {
      const v = this.state(log.vertex, "");
      out += this.announce(v);
      out += this.takeOutput(v, v.decoder.decode(log.data, { stream: true }));
    }
    for (const vertex of status.vertexes) out += this.onEnd(vertex);
    return out;
  }

  private onStart(vertex: BuildKitVertex): string {
    const v = this.state(vertex.digest, vertex.name);
    let out = "";
    if (vertex.started !== undefined || vertex.cached || vertex.completed !== undefined) out += this.announce(v);
    // The engine repeats a finished step with `cached` set; it was reported once already.
    if (vertex.cached && !v.cached && !v.done) {
      v.cached = true;
      out += `#${v.number} CACHED\n`;
    }
    return out;
  }

  private onEnd(vertex: BuildKitVertex): string {
    const v = this.state(vertex.digest, vertex.name);
    if (vertex.error) this.lastStep ??= v.name;
    if (vertex.completed === undefined || v.done) return "";
    v.done = true;
    let out = this.flushPartial(v);
    if (vertex.error) out += `#${v.number} ERROR: ${vertex.error}\n`;
    else if (!v.cached) out += `#${v.number} DONE ${seconds(vertex.started, vertex.completed)}\n`;
    return out;
  }

  private state(digest: string, name: string): VertexState {
    let v = this.vertexes.get(digest);
    if (!v) {
      v = { number: this.vertexes.size + 1, name, announced: false, cached: false, done: false, partial: "", decoder: new TextDecoder(), statusesDone: new Set() };
      this.vertexes.set(digest, v);
    } else if (!v.name && name) v.name = name;
    return v;
  }

  private announce(v: VertexState): string {
    if (v.announced) return "";
    v.announced = true;
    return `#${v.number} ${v.name || "(step)"}\n`;
  }

  private takeOutput(v: VertexState, chunk: string): string {
    const joined = v.partial + chunk;
    const cut = joined.lastIndexOf("\n");
    let out = "";
    let rest = joined;
    if (cut >= 0) {
      for (const line of joined.slice(0, cut).split("\n")) out += `#${v.number} ${line.replace(/\r$/, "")}\n`;
      rest = joined.slice(cut + 1);
    }
    // A step that never prints a newline must not hold the engine's output in memory without end.
    while (rest.length > MAX_PARTIAL_LINE) {
      out += `#${v.number} ${rest.slice(0, MAX_PARTIAL_LINE)}\n`;
      rest = rest.slice(MAX_PARTIAL_LINE);
    }
    v.partial = rest;
    return out;
  }

  private flushPartial(v: VertexState): string {
    const rest = v.partial + v.decoder.decode();
    v.partial = "";
    return rest ? `#${v.number} ${rest.replace(/\r$/, "")}\n` : "";
  }
}

function seconds(started: number | undefined, completed: number): string {
  if (started === undefined) return "0.0s";
  return `${(Math.max(0, completed - started) / 1000).toFixed(1)}s`;
}
