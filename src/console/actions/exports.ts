import type { ExportStatus } from "../../db/schema";
import { observedStatus } from "../../exports/export-state";
import { type ExportRecord, findExport as findRecord, listExports } from "../../exports/store";
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

/**
 * A record as a person should see it: with the status its link answers with (`observedStatus`:
 * expired past retention, failed past its deadline), even before the sweep rewrites the record.
 */
function view(row: ExportRecord, now: number, retentionSeconds: number): ExportRowView {
  return {
    id: row.id,
    status: observedStatus(row, now, retentionSeconds),
    created_at: iso(row.createdAt),
    finished_at: row.finishedAt === null ? null : iso(row.finishedAt),
    size_bytes: row.sizeBytes,
    sha256: row.sha256,
  };
}

/** The newest exports of a database (the caller has checked it owns the database). */
export async function listRecentExports(env: Env, databaseId: string, now: number, retentionSeconds: number): Promise<ExportRowView[]> {
  const rows = await listExports(env, databaseId, EXPORTS_SHOWN);
  return rows.map((r) => view(r, now, retentionSeconds));
}

/** One export of a database, or null when it is not that database's. */
export async function findExport(env: Env, databaseId: string, exportId: string, now: number, retentionSeconds: number) {
  const row = await findRecord(env, { databaseId, exportId });
  return row ? view(row, now, retentionSeconds) : null;
}
