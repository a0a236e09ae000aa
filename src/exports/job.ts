import { dumpStream } from "../databases/dump-stream";
import { managedDatabase } from "../databases/service";
import { describeError, log } from "../http/log";
import { type UploadOptions, uploadArchive } from "./archive-upload";
import { deleteObjects, trackUpload } from "./cleanup";
import { gzipStream } from "./gzip";
import { EXPORT_DLQ, EXPORT_MAX_ATTEMPTS, retryDelaySeconds } from "./job-limits";
import type { ExportJobMessage } from "./messages";
import { archiveKey, claimExport, exportObjectKeys, markExportFailed, markExportReady } from "./store";

/** What the queue consumer takes besides the batch: the clock, and a part size tests may lower. */
export interface JobOptions extends Pick<UploadOptions, "partBytes"> {
  /** The clock (Unix ms), injectable like the HTTP app's. */
  now: () => number;
}

/** The queue consumer for both export-jobs and its dead-letter queue. */
export async function handleExportBatch(batch: MessageBatch<unknown>, env: Env, options: JobOptions): Promise<void> {
  for (const message of batch.messages) {
    const body = readMessage(message.body);
    if (!body) {
      log("error", "export job message has the wrong shape; dropped", { queue: batch.queue, message_id: message.id });
      message.ack();
    } else if (batch.queue === EXPORT_DLQ) {
      await markExportFailed(env, body, "every try of the export job crashed", options.now());
      message.ack();
    } else {
      await runExportJob(env, message as Message<ExportJobMessage>, options);
    }
  }
}

/**
 * One try of one export: `running`, dump -> gzip -> SHA-256 -> R2, `ready`. A failed try asks the
 * queue for a later one with backoff; the last failed try marks the export `failed`. A message
 * for an export that is no longer in flight (ready, failed, expired, past its deadline, deleted)
 * is acked and does nothing.
 */
export async function runExportJob(env: Env, message: Message<ExportJobMessage>, options: JobOptions): Promise<void> {
  const job = message.body;
  const fields = { export_id: job.exportId, database_id: job.databaseId, attempt: message.attempts };
  if (!(await claimExport(env, job, options.now(), message.attempts))) {
    log("info", "export job has nothing to do", fields);
    message.ack();
    return;
  }
  try {
    const dump = dumpStream(managedDatabase(env, job.databaseId));
    const archive = await uploadArchive(env.ARCHIVES, archiveKey(job.databaseId, job.exportId), gzipStream(dump), {
      partBytes: options.partBytes,
      metadata: { export_id: job.exportId, database_id: job.databaseId },
      // A crash mid-upload cannot abort it; the record lets the sweep abort it later.
      track: (upload) => trackUpload(env, { ...upload, exportId: job.exportId }, options.now()),
    });
    if (await markExportReady(env, job, archive, options.now())) {
      log("info", "export ready", { ...fields, size_bytes: archive.size });
    } else {
      // Failed by its deadline or its database deleted while it ran: nobody may find this archive.
      await deleteObjects(env, exportObjectKeys(job), options.now());
      log("warn", "export finished after it was failed or its database deleted; archive removed", fields);
    }
    message.ack();
  } catch (err) {
    if (message.attempts >= EXPORT_MAX_ATTEMPTS) {
      log("error", "export failed for good", { ...fields, ...describeError(err) });
      await markExportFailed(env, job, describeError(err).error_message as string, options.now());
      message.ack();
    } else {
      const delaySeconds = retryDelaySeconds(message.attempts);
      log("warn", "export try failed; retrying", { ...fields, retry_in_seconds: delaySeconds, ...describeError(err) });
      message.retry({ delaySeconds });
    }
  }
}

function readMessage(body: unknown): ExportJobMessage | null {
  if (typeof body !== "object" || body === null) return null;
  const { exportId, databaseId } = body as Record<string, unknown>;
  return typeof exportId === "string" && typeof databaseId === "string" ? { exportId, databaseId } : null;
}
