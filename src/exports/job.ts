import { getConfig } from "../config";
import { DUMP_START } from "../databases/dump";
import { dumpStream } from "../databases/dump-stream";
import { managedDatabase } from "../databases/service";
import { isJournalFull } from "../databases/snapshot-journal";
import { describeError, log } from "../http/log";
import { ARCHIVE_PART_BYTES, type ArchiveTarget, copyStretch, freshProgress, type Stretch, stageStretch } from "./archive-upload";
import { deleteObjects, settle, trackObject, trackUpload, untrack } from "./cleanup";
import { gzipStream } from "./gzip";
import { heartbeat, RunnerStopped } from "./heartbeat";
import { deadlineAfter, EXPORT_DLQ, EXPORT_MAX_ATTEMPTS, retryDelaySeconds } from "./job-limits";
import type { ExportJobMessage } from "./messages";
import { type ExportProgress, readProgress, type TrackedObject, writeProgress } from "./progress";
import { archiveKey, checkpointExport, claimExport, exportObjectKeys, findExport, markExportFailed, markExportReady, noteRunnerAlive, stagingKey } from "./store";

/** What the queue consumer takes besides the batch: the clock, and settings tests may lower. */
export interface JobOptions {
  /** The clock (Unix ms), injectable like the HTTP app's. */
  now: () => number;
  /** Size of every archive part but the last (default ARCHIVE_PART_BYTES). */
  partBytes?: number;
  /** Bytes one invocation works through (default: the EXPORT_INVOCATION_BYTES setting). */
  budgetBytes?: number;
  /** Sends the message for an export's next invocation (default: onto the export-jobs queue). */
  enqueue?: (message: ExportJobMessage) => Promise<void>;
}

/** The queue consumer for both export-jobs and its dead-letter queue. */
export async function handleExportBatch(batch: MessageBatch<unknown>, env: Env, options: JobOptions): Promise<void> {
  for (const message of batch.messages) {
    const body = readMessage(message.body);
    if (!body) {
      log("error", "export job message has the wrong shape; dropped", { queue: batch.queue, message_id: message.id });
      message.ack();
    } else if (batch.queue === EXPORT_DLQ) {
      if (await markExportFailed(env, body, "every try of the export job crashed", options.now())) await releaseDump(env, body);
      message.ack();
    } else {
      await runExportJob(env, message as Message<ExportJobMessage>, options);
    }
  }
}

/**
 * One invocation of one export: `running`, then from its latest checkpoint dump -> gzip -> SHA-256
 * -> R2 until the invocation's budget is spent, and either the next checkpoint plus a message for
 * the next invocation, or `ready`. A failed try asks the queue for a later one with backoff, which
 * goes on from the same checkpoint; the last failed try marks the export `failed`. A message for an
 * export that is no longer in flight (ready, failed, expired, past its deadline, deleted) is acked
 * and does nothing. The try writes a heartbeat as it works (heartbeat.ts), and stops once the export
 * is no longer in flight.
 */
export async function runExportJob(env: Env, message: Message<ExportJobMessage>, options: JobOptions): Promise<void> {
  const job = message.body;
  const fields = { export_id: job.exportId, database_id: job.databaseId, attempt: message.attempts };
  const claimedAt = options.now();
  const claim = await claimExport(env, job, claimedAt, message.attempts);
  if (!claim) {
    log("info", "export job has nothing to do", fields);
    message.ack();
    return;
  }
  try {
    const target = { ...archiveTarget(env, job, options), beat: heartbeat(env, job, options.now, claimedAt) };
    const outcome = await runInvocation(env, job, target, readProgress(claim.progress) ?? freshProgress(), options);
    const now = options.now();
    if ("archive" in outcome) {
      if (await markExportReady(env, job, outcome.archive, now)) {
        log("info", "export ready", { ...fields, size_bytes: outcome.archive.size, invocations: claim.step + 1 });
      } else if ((await findExport(env, job))?.status === "ready") {
        // A second try (the queue's, or the one the gate queued when this one fell silent) got there first, with the same archive.
        log("info", "export already made ready by another try", fields);
      } else {
        // Failed by its deadline or its database deleted while it ran: nobody may find this archive.
        await deleteObjects(env, exportObjectKeys(job), now);
        log("warn", "export finished after it was failed or its database deleted; archive removed", fields);
      }
    } else if (await checkpointExport(env, job, claim.step, writeProgress(outcome.progress), deadlineAfter(claim.deadlineAt, now), now)) {
      if (outcome.spent) await target.drop([outcome.spent]);
      await (options.enqueue ?? ((body) => env.EXPORT_JOBS.send(body)))({ exportId: job.exportId, databaseId: job.databaseId });
      log("info", "export checkpoint stored; the next invocation goes on", { ...fields, step: claim.step + 1, size_bytes: outcome.progress.size });
    } else {
      // Another try from the same checkpoint stored its own, or the export ended: this try's carry is nobody's.
      const carry = outcome.progress.carry;
      if (carry && carry.key !== outcome.spent?.key) await target.drop([carry]);
      log("warn", "export checkpoint not stored: the export moved on without this try", fields);
    }
    message.ack();
  } catch (err) {
    if (err instanceof RunnerStopped) {
      log("info", "export no longer in flight; this try stops", fields);
      message.ack();
      return;
    }
    // A snapshot lost to too many writes is lost for every try: the export fails at once, saying why.
    if (message.attempts >= EXPORT_MAX_ATTEMPTS || isJournalFull(err)) {
      log("error", "export failed for good", { ...fields, ...describeError(err) });
      await markExportFailed(env, job, describeError(err).error_message as string, options.now());
      await releaseDump(env, job);
      message.ack();
    } else {
      const delaySeconds = retryDelaySeconds(message.attempts);
      log("warn", "export try failed; retrying from the last checkpoint", { ...fields, retry_in_seconds: delaySeconds, ...describeError(err) });
      // The next try's due time counts as a sign of life, so the gate does not take the wait for a death.
      await noteRunnerAlive(env, job, options.now() + delaySeconds * 1000).catch(() => false);
      message.retry({ delaySeconds });
    }
  }
}

/**
 * This invocation's share of the work from checkpoint `from`: the dump's next stretch, then (with
 * budget left once the dump is all staged) the copy under the archive's key.
 */
async function runInvocation(env: Env, job: ExportJobMessage, target: ArchiveTarget, from: ExportProgress, options: JobOptions): Promise<Stretch> {
  const staging = stagingKey(target.key);
  let budget = options.budgetBytes ?? getConfig(env).EXPORT_INVOCATION_BYTES;
  let progress = from;
  let spent: TrackedObject | null = null;
  if (progress.dump !== null) {
    const db = managedDatabase(env, job.databaseId);
    let dumpId = await db.resumeDump(job.exportId, progress.dump);
    if (dumpId === null) {
      // The lease lapsed (the database may have taken writes since the dump began): start over.
      if (progress.dump.table !== DUMP_START.table) log("warn", "export dump lease lapsed; the dump starts over", { export_id: job.exportId });
      // A fresh staging upload too: the old one may have been completed by a try that died just
      // after the dump's end (the sweep aborts it if not, once the export is done).
      spent = progress.carry;
      progress = freshProgress();
      dumpId = await db.openDump({ lease: job.exportId, maxJournalBytes: getConfig(env).EXPORT_JOURNAL_MAX_BYTES });
    }
    const dump = dumpStream(db, { id: dumpId, stopAfterBytes: budget });
    const stretch = await stageStretch(target, staging, progress, gzipStream(dump, { releaseInput: true }), () => dump.stretch.next);
    if ("archive" in stretch) return finished(target, stretch, spent);
    budget -= dump.stretch.bytes;
    progress = stretch.progress;
    spent = stretch.spent ?? spent;
    if (progress.dump !== null || budget <= 0) return { progress, spent };
  }
  const copied = await copyStretch(target, staging, progress, budget);
  return "archive" in copied ? finished(target, copied, spent) : { progress: copied.progress, spent };
}

/** The archive is whole: a carry the last stretch used up goes now. */
async function finished(target: ArchiveTarget, stretch: Stretch, spent: TrackedObject | null): Promise<Stretch> {
  if (spent) await target.drop([spent]);
  return stretch;
}

/** The export's archive in R2, with its r2_cleanup bookkeeping bound to the export. */
function archiveTarget(env: Env, job: ExportJobMessage, options: JobOptions): ArchiveTarget {
  const now = options.now;
  return {
    bucket: env.ARCHIVES,
    key: archiveKey(job.databaseId, job.exportId),
    partBytes: options.partBytes ?? ARCHIVE_PART_BYTES,
    metadata: { export_id: job.exportId, database_id: job.databaseId },
    // A crash mid-upload cannot abort it; the record lets the sweep abort it once the export is no longer in flight.
    trackUpload: async (key, uploadId) => (await trackUpload(env, { key, uploadId, exportId: job.exportId }, now())).id,
    trackObject: async (key) => ({ key, trackId: (await trackObject(env, { key, exportId: job.exportId }, now())).id }),
    untrack: (ids) => untrack(env, ids),
    drop: async (objects) => void (await settle(env, objects.map((o) => ({ id: o.trackId, key: o.key, uploadId: null, exportId: job.exportId })))),
  };
}

/** Lets the database take writes again after its export ended some other way (best effort: the lease lapses anyway). */
async function releaseDump(env: Env, job: ExportJobMessage): Promise<void> {
  await managedDatabase(env, job.databaseId)
    .releaseDump(job.exportId)
    .catch((err: unknown) => log("warn", "could not release the dump lease; it lapses by itself", { export_id: job.exportId, ...describeError(err) }));
}

function readMessage(body: unknown): ExportJobMessage | null {
  if (typeof body !== "object" || body === null) return null;
  const { exportId, databaseId } = body as Record<string, unknown>;
  return typeof exportId === "string" && typeof databaseId === "string" ? { exportId, databaseId } : null;
}
