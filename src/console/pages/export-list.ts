import { and, desc, eq } from "drizzle-orm";
import { database } from "../../db/client";
import { type ExportStatus, exports } from "../../db/schema";
import { isPastRetention } from "../../exports/retention";
import { iso } from "../../lib/time";

/** How many exports a database page lists, newest first. */
export const EXPORTS_SHOWN = 10;

/** An export as the console shows it. */
export interface ExportRowView {
  id: string;
  status: ExportStatus;
  created_at: string;
  finished_at: string | null;
  size_bytes: number | null;
  sha256: string | null;
}

type ExportRow = typeof exports.$inferSelect;

/**
 * The status a person should see: a `ready` export whose retention time has passed is `expired`
 * even before the retention sweep has rewritten its record, as its link already answers 410
 * (the same rule as the download endpoint's).
 */
export function shownStatus(row: Pick<ExportRow, "status" | "finishedAt">, now: number, retentionSeconds: number): ExportStatus {
  if (row.status === "ready" && row.finishedAt !== null && isPastRetention(row.finishedAt, retentionSeconds, now)) return "expired";
  return row.status;
}

function view(row: ExportRow, now: number, retentionSeconds: number): ExportRowView {
  return {
    id: row.id,
    status: shownStatus(row, now, retentionSeconds),
    created_at: iso(row.createdAt),
    finished_at: row.finishedAt === null ? null : iso(row.finishedAt),
    size_bytes: row.sizeBytes,
    sha256: row.sha256,
  };
}

/** The newest exports of a database (the caller has checked it owns the database). */
export async function listRecentExports(env: Env, databaseId: string, now: number, retentionSeconds: number): Promise<ExportRowView[]> {
  const rows = await database(env)
    .select()
    .from(exports)
    .where(eq(exports.databaseId, databaseId))
    .orderBy(desc(exports.createdAt))
    .limit(EXPORTS_SHOWN);
  return rows.map((r) => view(r, now, retentionSeconds));
}

/** One export of a database, or null when it is not that database's. */
export async function findExport(env: Env, databaseId: string, exportId: string, now: number, retentionSeconds: number) {
  const row = await database(env)
    .select()
    .from(exports)
    .where(and(eq(exports.id, exportId), eq(exports.databaseId, databaseId)))
    .get();
  return row ? view(row, now, retentionSeconds) : null;
}
