import { deadlineAfterCheckpoint, exportDeadline, type JobLimits } from "./export-state";

/**
 * The limits one export job runs under, as wrangler.toml and the platform set them, and the
 * deadline they give every export.
 */

/** `max_retries` of the export-jobs consumer in wrangler.toml: the queue's redeliveries after the first try. */
export const EXPORT_QUEUE_MAX_RETRIES = 4;
/** Tries in all; after the last one the export is failed. */
export const EXPORT_MAX_ATTEMPTS = EXPORT_QUEUE_MAX_RETRIES + 1;
/** The dead-letter queue in wrangler.toml: messages whose every try crashed the consumer land here. */
export const EXPORT_DLQ = "export-jobs-dlq";
/** Cloudflare stops a queue consumer invocation after 15 minutes of wall-clock time. */
export const QUEUE_INVOCATION_SECONDS = 15 * 60;
/** Room for queue delivery (a backlog, `max_batch_timeout`) and the dead-letter consumer. */
export const DEADLINE_SLACK_SECONDS = 5 * 60;

/** Seconds before try `attempts + 1`: 10, 20, 40, 80, ... capped at five minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(300, 10 * 2 ** Math.max(0, attempts - 1));
}

/** The limits of an export job as deployed. */
export const EXPORT_JOB_LIMITS: JobLimits = {
  attempts: EXPORT_MAX_ATTEMPTS,
  invocationSeconds: QUEUE_INVOCATION_SECONDS,
  retryDelaySeconds,
  slackSeconds: DEADLINE_SLACK_SECONDS,
};

/** The deadline of an export accepted at `createdAt` (Unix ms): 82.5 minutes later as deployed. */
export function deadlineFor(createdAt: number): number {
  return exportDeadline(createdAt, EXPORT_JOB_LIMITS);
}

/** The deadline of an export whose job stored a checkpoint at `checkpointAt` (Unix ms). */
export function deadlineAfter(deadlineAt: number, checkpointAt: number): number {
  return deadlineAfterCheckpoint(deadlineAt, checkpointAt, EXPORT_JOB_LIMITS);
}
