import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/** Managed databases, their exports, and the R2 work an export may leave owed. */

export const databases = sqliteTable(
  "databases",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("databases_account_idx").on(t.accountId)],
);

export const EXPORT_STATUSES = ["pending", "running", "ready", "failed", "expired"] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const exports = sqliteTable(
  "exports",
  {
    id: text("id").primaryKey(),
    databaseId: text("database_id")
      .notNull()
      .references(() => databases.id, { onDelete: "cascade" }),
    status: text("status", { enum: EXPORT_STATUSES }).notNull(),
    createdAt: integer("created_at").notNull(),
    startedAt: integer("started_at"),
    /** When the export became ready or failed. Retention counts from here. */
    finishedAt: integer("finished_at"),
    sizeBytes: integer("size_bytes"),
    sha256: text("sha256"),
    attempts: integer("attempts").notNull().default(0),
    /**
     * Past this moment (Unix ms) a pending or running export is failed: no try of its job can
     * still be under way (see exportDeadline). 0 on rows older than the column: failed at once.
     */
    deadlineAt: integer("deadline_at").notNull().default(0),
    /** Internal failure detail for operators; never sent to clients. */
    failureReason: text("failure_reason"),
    /**
     * Checkpoints of a running export's job so far: each queue invocation goes on from the last
     * one and stores the next only over the one it started from (two tries cannot both store theirs).
     */
    step: integer("step").notNull().default(0),
    /** The last checkpoint (JSON, see src/exports/progress.ts); null before the first and once finished. */
    progress: text("progress"),
    /**
     * The runner's last sign of life (Unix ms): accepted, claimed, a heartbeat, a checkpoint, or when
     * a retry is due. Silent for a minute, the export's job is queued again once, then failed
     * (src/exports/runner-watch.ts). Null on rows older than the column: its creation counts.
     */
    runnerAliveAt: integer("runner_alive_at"),
    /** Times the job was queued again since the last checkpoint because its runner fell silent. */
    revivals: integer("revivals").notNull().default(0),
  },
  (t) => [
    index("exports_database_idx").on(t.databaseId, t.createdAt),
    index("exports_status_idx").on(t.status, t.finishedAt),
    index("exports_deadline_idx").on(t.status, t.deadlineAt),
  ],
);

/**
 * R2 work that is owed and must not be forgotten: an object to delete (`uploadId` null) or a
 * multipart upload to abort. Written before the work is tried, removed once it is done; the
 * sweep retries what is left. A row naming an export waits while that export is in flight.
 */
export const r2Cleanup = sqliteTable(
  "r2_cleanup",
  {
    id: text("id").primaryKey(),
    key: text("key").notNull(),
    uploadId: text("upload_id"),
    /** The export whose job owns this upload; no foreign key, so the row outlives the export. */
    exportId: text("export_id"),
    createdAt: integer("created_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
  },
  (t) => [index("r2_cleanup_created_idx").on(t.createdAt), index("r2_cleanup_export_idx").on(t.exportId)],
);
