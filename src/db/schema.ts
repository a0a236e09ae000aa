import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Times are Unix milliseconds (integers) throughout. */

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  /** `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>` */
  passwordHash: text("password_hash").notNull(),
  createdAt: integer("created_at").notNull(),
});

export const sessions = sqliteTable(
  "sessions",
  {
    /** SHA-256 (hex) of the cookie value; the cookie itself is never stored. */
    idHash: text("id_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("sessions_account_idx").on(t.accountId)],
);

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** The first characters of the secret, safe to show (`dbx_AbCd`). */
    prefix: text("prefix").notNull(),
    /** SHA-256 (hex) of the whole secret: the only form in which it is kept. */
    tokenHash: text("token_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [uniqueIndex("api_tokens_hash_idx").on(t.tokenHash), index("api_tokens_account_idx").on(t.accountId)],
);

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

export const schema = { accounts, sessions, apiTokens, databases, exports, r2Cleanup };
