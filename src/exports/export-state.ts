import type { ExportStatus } from "../db/schema";

/**
 * The state rules of an export record (docs/api.md, export rule 5, the
 * download link's answers by state). Pure: the clock and the settings are arguments. The download, the console, the gate
 * and the sweep all read a record through `observedStatus`, so they cannot disagree.
 */

/** The fields of an export record the rules read. */
export interface ExportClockFields {
  status: ExportStatus;
  /** When it became ready or failed (Unix ms). */
  finishedAt: number | null;
  /** Past this moment (Unix ms) an export still pending or running has failed. */
  deadlineAt: number;
}

/** Statuses of an export that is still being prepared. */
export const IN_FLIGHT: ReadonlySet<ExportStatus> = new Set(["pending", "running"]);

/** Whether an archive that became ready at `readyAt` (Unix ms) is past retention at `now`. */
export function isPastRetention(readyAt: number, retentionSeconds: number, now: number): boolean {
  return now >= readyAt + retentionSeconds * 1000;
}

/** Whether an export still recorded as pending or running has outlived its deadline at `now`. */
export function isOverdue(record: Pick<ExportClockFields, "status" | "deadlineAt">, now: number): boolean {
  return IN_FLIGHT.has(record.status) && now >= record.deadlineAt;
}

/**
 * What the record means at `now`: a ready export past retention is `expired` and an in-flight
 * export past its deadline is `failed`, from the exact moment, before the sweep rewrites them.
 */
export function observedStatus(record: ExportClockFields, now: number, retentionSeconds: number): ExportStatus {
  if (isOverdue(record, now)) return "failed";
  if (record.status === "ready" && record.finishedAt !== null && isPastRetention(record.finishedAt, retentionSeconds, now)) return "expired";
  return record.status;
}

/** What bounds the life of one export job (the queue's settings in wrangler.toml and the platform's limits). */
export interface JobLimits {
  /** Tries in all: the first delivery plus the queue's `max_retries`. */
  attempts: number;
  /** Longest one try can run: the platform's wall-clock limit for a queue consumer invocation. */
  invocationSeconds: number;
  /** The delay the job asks for before try `attempt + 1`. */
  retryDelaySeconds: (attempt: number) => number;
  /** Room for the queue to deliver each message and the dead-letter consumer to run. */
  slackSeconds: number;
}

/**
 * The moment (Unix ms) after which no try of a job message sent at `sentAt` can still be running:
 * every try at its longest, every backoff between tries, and the slack. An export's first message
 * goes out when it is accepted (`createdAt`).
 */
export function exportDeadline(sentAt: number, limits: JobLimits): number {
  let seconds = limits.attempts * limits.invocationSeconds + limits.slackSeconds;
  for (let attempt = 1; attempt < limits.attempts; attempt++) seconds += limits.retryDelaySeconds(attempt);
  return sentAt + seconds * 1000;
}

/**
 * The deadline of an export after a checkpoint at `checkpointAt`: a large export takes many
 * invocations, each ending with a checkpoint and a fresh message for the next, which gets the
 * whole window of tries again. So the deadline is the window from the last checkpoint (never
 * earlier than before): an export that keeps making progress is never failed by it, and one
 * that stops fails one window after its last progress, as a one-invocation export does.
 */
export function deadlineAfterCheckpoint(deadlineAt: number, checkpointAt: number, limits: JobLimits): number {
  return Math.max(deadlineAt, exportDeadline(checkpointAt, limits));
}
