import { and, eq, inArray } from "drizzle-orm";
import { database } from "../db/client";
import { exports } from "../db/schema";
import { dumpStream } from "../databases/dump-stream";
import { archiveKey, managedDatabase } from "../databases/service";
import { describeError, log } from "../http/log";
import { type UploadOptions, uploadArchive } from "./archive-upload";
import { gzipStream } from "./gzip";
import type { ExportJobMessage } from "./messages";

/** `max_retries` of the export-jobs consumer in wrangler.toml: the queue's redeliveries after the first try. */
export const EXPORT_QUEUE_MAX_RETRIES = 4;
/** Tries in all; after the last one the export is failed. */
export const EXPORT_MAX_ATTEMPTS = EXPORT_QUEUE_MAX_RETRIES + 1;
/** The dead-letter queue in wrangler.toml: messages whose every try crashed the consumer land here. */
export const EXPORT_DLQ = "export-jobs-dlq";
/** Operator detail kept in `failure_reason`; longer messages are cut. */
const MAX_REASON_CHARS = 500;

/** What the queue consumer takes besides the batch: the clock, and a part size tests may lower. */
export interface JobOptions extends Pick<UploadOptions, "partBytes"> {
  /** The clock (Unix ms), injectable like the HTTP app's. */
  now: () => number;
}

/** Seconds before try `attempts + 1`: 10, 20, 40, 80, ... capped at five minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(300, 10 * 2 ** Math.max(0, attempts - 1));
}

/** The queue consumer for both export-jobs and its dead-letter queue. */
export async function handleExportBatch(batch: MessageBatch<unknown>, env: Env, options: JobOptions): Promise<void> {
  for (const message of batch.messages) {
    const body = readMessage(message.body);
    if (!body) {
      log("error", "export job message has the wrong shape; dropped", { queue: batch.queue, message_id: message.id });
      message.ack();
    } else if (batch.queue === EXPORT_DLQ) {
      await markFailed(env, body, "every try of the export job crashed", options.now());
      message.ack();
    } else {
      await runExportJob(env, message as Message<ExportJobMessage>, options);
    }
  }
}

/**
 * One try of one export: `running`, dump -> gzip -> SHA-256 -> R2, `ready`. A failed try asks the
 * queue for a later one with backoff; the last failed try marks the export `failed`. A message
 * for an export that is no longer pending or running (ready, failed, expired, deleted) is acked
 * and does nothing.
 */
export async function runExportJob(env: Env, message: Message<ExportJobMessage>, options: JobOptions): Promise<void> {
  const job = message.body;
  const fields = { export_id: job.exportId, database_id: job.databaseId, attempt: message.attempts };
  const db = database(env);
  const claimed = await db
    .update(exports)
    .set({ status: "running", startedAt: options.now(), attempts: message.attempts })
    .where(and(eq(exports.id, job.exportId), eq(exports.databaseId, job.databaseId), inArray(exports.status, ["pending", "running"])))
    .returning({ id: exports.id });
  if (claimed.length === 0) {
    log("info", "export job has nothing to do", fields);
    message.ack();
    return;
  }
  try {
    const dump = dumpStream(managedDatabase(env, job.databaseId));
    const archive = await uploadArchive(env.ARCHIVES, archiveKey(job.databaseId, job.exportId), gzipStream(dump), {
      partBytes: options.partBytes,
      metadata: { export_id: job.exportId, database_id: job.databaseId },
    });
    await db
      .update(exports)
      .set({ status: "ready", finishedAt: options.now(), sizeBytes: archive.size, sha256: archive.sha256, failureReason: null })
      .where(and(eq(exports.id, job.exportId), eq(exports.status, "running")));
    log("info", "export ready", { ...fields, size_bytes: archive.size });
    message.ack();
  } catch (err) {
    if (message.attempts >= EXPORT_MAX_ATTEMPTS) {
      log("error", "export failed for good", { ...fields, ...describeError(err) });
      await markFailed(env, job, describeError(err).error_message as string, options.now());
      message.ack();
    } else {
      const delaySeconds = retryDelaySeconds(message.attempts);
      log("warn", "export try failed; retrying", { ...fields, retry_in_seconds: delaySeconds, ...describeError(err) });
      message.retry({ delaySeconds });
    }
  }
}

/**
 * Marks a pending or running export `failed` (its link answers 404 from now on; the gate, which
 * reads D1, lets a new export start at once) and removes any archive a late step left behind.
 */
export async function markFailed(env: Env, job: ExportJobMessage, reason: string, now: number): Promise<void> {
  const failed = await database(env)
    .update(exports)
    .set({ status: "failed", finishedAt: now, failureReason: reason.slice(0, MAX_REASON_CHARS) })
    .where(and(eq(exports.id, job.exportId), eq(exports.databaseId, job.databaseId), inArray(exports.status, ["pending", "running"])))
    .returning({ id: exports.id });
  if (failed.length === 0) return;
  // Cleanup only: the record already says failed, which is what the download reads.
  await env.ARCHIVES.delete(archiveKey(job.databaseId, job.exportId)).catch((err: unknown) =>
    log("warn", "archive of a failed export could not be deleted", { export_id: job.exportId, ...describeError(err) }),
  );
}

function readMessage(body: unknown): ExportJobMessage | null {
  if (typeof body !== "object" || body === null) return null;
  const { exportId, databaseId } = body as Record<string, unknown>;
  return typeof exportId === "string" && typeof databaseId === "string" ? { exportId, databaseId } : null;
}
