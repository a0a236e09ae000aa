/**
 * One instance's live output shared by all its viewers (the LiveLogs object holds one feed per
 * instance): each line is masked and given its event id once, kept in a ring of the last RING_LINES
 * lines, and read by every subscriber at its own pace from its own place in the ring. A subscriber
 * holds no lines of its own, only its place: one that falls SLOW_LAG_LINES behind the newest line
 * (or out of the ring) is closed, and its EventSource comes back with Last-Event-ID and resumes from
 * the ring. A resume older than the ring is first caught up from the engine (`logs?since=`).
 */
import type { LogLine } from "../runtime/types";
import { type LogCursor, LogIds } from "./cursor";
import { maskLine } from "./mask";
import { HEARTBEAT_MS, RETRY_MS, logEvent } from "./sse";

/** Lines kept for resumes and new viewers. */
export const RING_LINES = 1000;
/** Lines sent first on a fresh stream (no Last-Event-ID). */
export const STREAM_BACKLOG_LINES = 100;
/** A subscriber this many new lines behind is closed (it resumes from the ring when it comes back). */
export const SLOW_LAG_LINES = 500;
/** At most this much text goes to a subscriber in one piece. */
const BATCH_CHARS = 64 * 1024;

export interface Entry {
  cursor: LogCursor;
  event: string;
}

export interface Resume extends LogCursor {
  instance: string;
}

/** Where a subscriber starts (a sequence number of the ring) and whether the engine must fill a gap first. */
export interface Start {
  seq: number;
  catchUp: boolean;
}

export function compareCursors(a: LogCursor, b: LogCursor): number {
  return a.at - b.at || a.n - b.n;
}

/**
 * Where a subscriber with `resume` starts in a ring holding `entries` (sequence numbers from
 * `first`; `complete` when it holds the instance's output from its start): after `resume` on this
 * instance (caught up from the engine when that is older than the ring), the whole ring for a
 * resume from another instance (a new instance's output from its start), else the last `backlog`.
 */
export function startPosition(entries: readonly Entry[], first: number, complete: boolean, resume: Resume | null, tag: string, backlog = STREAM_BACKLOG_LINES): Start {
  const next = first + entries.length;
  if (!resume) return { seq: Math.max(first, next - backlog), catchUp: false };
  if (resume.instance !== tag) return { seq: first, catchUp: false };
  const after = entries.findIndex((e) => compareCursors(e.cursor, resume) > 0);
  const seq = after < 0 ? next : first + after;
  // Lines older than the ring, newer than the resume, may exist only on the engine.
  const behind = entries.length === 0 || after === 0;
  return { seq, catchUp: behind && !complete };
}

/** Whether a subscriber at `seq`, which joined when the ring ended at `joined`, is too far behind. */
export function tooSlow(seq: number, joined: number, first: number, next: number, catchingUp: boolean): boolean {
  if (!catchingUp && seq < first) return true;
  return next - Math.max(seq, joined) > SLOW_LAG_LINES;
}

export interface FeedOptions {
  tag: string;
  secrets: readonly string[];
  /** The engine's lines since a moment (ms), not followed: fills a resume older than the ring. */
  catchUp: (since: number, signal: AbortSignal) => Promise<AsyncIterable<LogLine> | null>;
  /** The last subscriber left. */
  onIdle: () => void;
  heartbeatMs?: number;
}

interface Subscriber {
  viewer: string;
  seq: number;
  joined: number;
  last: LogCursor | null;
  catchUp: { resume: LogCursor; call: AbortController; lines?: AsyncIterator<LogLine>; ids: LogIds } | null;
  closed: boolean;
  controller: ReadableStreamDefaultController<Uint8Array> | null;
}

const encoder = new TextEncoder();

export class LogFeed {
  #entries: Entry[] = [];
  #first = 0;
  #complete = false;
  #ended = false;
  #ids: LogIds;
  #subscribers = new Map<string, Subscriber>();
  #waiters = new Set<() => void>();

  constructor(private readonly options: FeedOptions) {
    this.#ids = new LogIds(null, options.tag);
  }

  get subscribers(): number {
    return this.#subscribers.size;
  }

  get #next(): number {
    return this.#first + this.#entries.length;
  }

  /**
   * The instance's last lines, read before following. Unless they are its whole output, the lines
   * of their first millisecond are left out: that millisecond may be cut, and ids number the lines
   * within a millisecond from its first, as a resume's `since` does.
   */
  load(lines: readonly LogLine[], complete: boolean): void {
    this.#complete = complete;
    const firstAt = lines[0]?.at ?? 0;
    let skipping = !complete;
    for (const line of lines) {
      if (skipping && line.at <= firstAt) continue;
      skipping = false;
      this.append(line);
    }
  }

  /** A new line from the engine: numbered, masked, kept, and handed to every subscriber. */
  append(line: LogLine): void {
    const id = this.#ids.next(line)!;
    const event = logEvent(id, { ...line, text: maskLine(line.text, this.options.secrets) });
    this.#entries.push({ cursor: this.#ids.position(), event });
    if (this.#entries.length > RING_LINES) {
      this.#entries.shift();
      this.#first++;
      this.#complete = false;
    }
    for (const sub of this.#subscribers.values()) if (tooSlow(sub.seq, sub.joined, this.#first, this.#next, sub.catchUp !== null)) this.#close(sub);
    this.#wake();
  }

  /** The engine ended the follow (the instance stopped or is gone): subscribers get what is left, then their stream ends. */
  end(): void {
    this.#ended = true;
    this.#wake();
  }

  #wake(): void {
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  /** Resolves true after `ms` with nothing new, false as soon as a line or the end comes. */
  #quiet(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        resolve(true);
      }, ms);
      this.#waiters.add(wake);
    });
  }

  /**
   * Viewer `viewer`'s SSE body: `retry`, its first lines (see startPosition), then every new line.
   * It ends when the viewer leaves (`leave`, or its stream is cancelled), is too slow, or the feed ends.
   */
  subscribe(viewer: string, resume: Resume | null): ReadableStream<Uint8Array> {
    const start = startPosition(this.#entries, this.#first, this.#complete, resume, this.options.tag);
    const same = resume && resume.instance === this.options.tag ? { at: resume.at, n: resume.n } : null;
    const sub: Subscriber = {
      viewer,
      seq: start.catchUp ? this.#next : start.seq,
      joined: this.#next,
      last: same,
      catchUp: start.catchUp && same ? { resume: same, call: new AbortController(), ids: new LogIds(same, this.options.tag) } : null,
      closed: false,
      controller: null,
    };
    this.#subscribers.set(viewer, sub);
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          sub.controller = controller;
          controller.enqueue(encoder.encode(`retry: ${RETRY_MS}\n\n`));
        },
        pull: (controller) => this.#pull(sub, controller),
        cancel: () => {
          sub.closed = true;
          this.#leave(sub);
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** The subscriber's next piece: lines (caught up, or from the ring), a keep-alive, or its end. */
  async #pull(sub: Subscriber, controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    while (!sub.closed) {
      if (sub.catchUp) {
        const event = await this.#catchUpOne(sub);
        if (sub.closed) return;
        if (event) return controller.enqueue(encoder.encode(event));
        continue;
      }
      const batch = this.#take(sub);
      if (batch) return controller.enqueue(encoder.encode(batch));
      if (this.#ended) return this.#close(sub);
      if (await this.#quiet(this.options.heartbeatMs ?? HEARTBEAT_MS)) {
        if (!sub.closed) controller.enqueue(encoder.encode(": keep-alive\n\n"));
        return;
      }
      // Woken by a line: the rest of the engine's chunk comes in the same piece.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /** Ends the subscriber's stream after what it was given. */
  #close(sub: Subscriber): void {
    if (sub.closed) return;
    sub.closed = true;
    this.#leave(sub);
    try {
      sub.controller?.close();
    } catch {
      // Cancelled meanwhile: nothing to close.
    }
    this.#wake();
  }

  /** The viewer went away: its stream ends, and with the last viewer the feed. */
  leave(viewer: string): void {
    const sub = this.#subscribers.get(viewer);
    if (sub) this.#close(sub);
  }

  #leave(sub: Subscriber): void {
    sub.catchUp?.call.abort();
    if (this.#subscribers.get(sub.viewer) !== sub) return;
    this.#subscribers.delete(sub.viewer);
    if (this.#subscribers.size === 0 && !this.#ended) {
      this.#ended = true;
      this.options.onIdle();
    }
  }

  /** The subscriber's next lines from the ring (after the last it got), or "" when it has them all. */
  #take(sub: Subscriber): string {
    let out = "";
    while (sub.seq < this.#next && out.length < BATCH_CHARS) {
      const entry = this.#entries[sub.seq - this.#first]!;
      sub.seq++;
      if (sub.last && compareCursors(entry.cursor, sub.last) <= 0) continue;
      sub.last = entry.cursor;
      out += entry.event;
    }
    return out;
  }

  /**
   * One line of a catch-up from the engine, or null when the catch-up is over (it reached the
   * ring, which takes over after the last line sent). A catch-up that ends short of the ring left
   * a gap the ring no longer holds: the subscriber is closed and resumes again.
   */
  async #catchUpOne(sub: Subscriber): Promise<string | null> {
    const catchUp = sub.catchUp!;
    if (!catchUp.lines) {
      const lines = await this.options.catchUp(catchUp.resume.at, catchUp.call.signal);
      catchUp.lines = lines?.[Symbol.asyncIterator]() ?? (async function* () {})();
    }
    for (;;) {
      const got = await catchUp.lines.next();
      const oldest = this.#entries[0]?.cursor;
      if (got.done) {
        this.#joinRing(sub);
        if (oldest && !this.#complete && (!sub.last || compareCursors(sub.last, oldest) < 0)) this.#close(sub);
        return null;
      }
      const id = catchUp.ids.next(got.value);
      if (id === null) continue;
      const cursor = catchUp.ids.position();
      if (oldest && compareCursors(cursor, oldest) >= 0) {
        this.#joinRing(sub);
        return null;
      }
      sub.last = cursor;
      return logEvent(id, { ...got.value, text: maskLine(got.value.text, this.options.secrets) });
    }
  }

  #joinRing(sub: Subscriber): void {
    sub.catchUp?.call.abort();
    sub.catchUp = null;
    sub.seq = this.#first;
  }
}
