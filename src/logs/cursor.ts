/**
 * Event ids of the live log stream, so a reconnect (`Last-Event-ID`) resumes without gaps or
 * duplicates. A line's id is `<at>-<n>-<instance>`: its engine timestamp (ms), how many lines
 * before it in the stream carried the same timestamp, and the first 12 characters of the
 * instance's id. Resuming on the same instance asks the engine for lines since `at` and skips the
 * first `n + 1` lines of that millisecond; on another instance (a deploy switched meanwhile) the
 * new instance's output is sent from its start.
 */
import type { LogLine } from "../runtime/types";

export interface LogCursor {
  at: number;
  n: number;
}

/** The short form of an instance id carried in event ids. */
export function instanceTag(instanceId: string): string {
  return instanceId.replace(/[^A-Za-z0-9_.]/g, "").slice(0, 12);
}

export function formatLogId(cursor: LogCursor, instance = ""): string {
  return `${cursor.at}-${cursor.n}${instance ? `-${instance}` : ""}`;
}

/** A `Last-Event-ID` as a cursor; null for anything else (a bad id starts a fresh stream). */
export function parseLogId(value: string | null | undefined): (LogCursor & { instance: string }) | null {
  const m = /^(\d{1,15})-(\d{1,9})(?:-([A-Za-z0-9_.]{1,12}))?$/.exec(value?.trim() ?? "");
  if (!m) return null;
  return { at: Number(m[1]), n: Number(m[2]), instance: m[3] ?? "" };
}

/**
 * Gives each line of a stream its id and drops the lines at or before `resume`. Lines come in the
 * engine's order; a line stamped earlier than the one before it is treated as of that moment,
 * so ids only grow.
 */
export class LogIds {
  private at = -1;
  private n = -1;

  constructor(
    private readonly resume: LogCursor | null = null,
    private readonly instance = "",
  ) {}

  /** The line's id, or null when the client already has it. */
  next(line: Pick<LogLine, "at">): string | null {
    const at = Math.max(line.at, this.at);
    this.n = at === this.at ? this.n + 1 : 0;
    this.at = at;
    const cursor = { at: this.at, n: this.n };
    if (this.resume && (cursor.at < this.resume.at || (cursor.at === this.resume.at && cursor.n <= this.resume.n))) return null;
    return formatLogId(cursor, this.instance);
  }

  /** The id of the last line given to `next`. */
  position(): LogCursor {
    return { at: this.at, n: this.n };
  }
}
