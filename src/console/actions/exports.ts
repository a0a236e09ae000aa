import type { Context } from "hono";
import { getOwnedDatabase } from "../../databases/service";
import type { ExportStatus } from "../../db/schema";
import { observedStatus } from "../../exports/export-state";
import { downloadLinkFor, startExport, type StartResult } from "../../exports/start";
import { type ExportRecord, findExport as findRecord, listExports } from "../../exports/store";
import type { AppEnv } from "../../http/context";
import { notFound } from "../../http/errors";
import { iso } from "../../lib/time";

/**
 * A database's exports as the console shows them, starting one (through the same ExportGate as
 * the public API) and a fresh download link for a ready one. The database pages call these
 * (exports-section.tsx); scripts use the public API (src/api/v1) instead.
 */

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
export async function listRecentExports(c: Context<AppEnv>, databaseId: string): Promise<ExportRowView[]> {
  const rows = await listExports(c.env, databaseId, EXPORTS_SHOWN);
  return rows.map((r) => view(r, c.get("deps").now(), c.get("config").ARCHIVE_RETENTION_SECONDS));
}

/** The newest exports of one of the account's databases (404 for another's). */
export async function ownedExports(c: Context<AppEnv>, id: string): Promise<{ databaseId: string; exports: ExportRowView[] }> {
  const owned = await getOwnedDatabase(c.env, c.get("accountId")!, id);
  return { databaseId: owned.id, exports: await listRecentExports(c, owned.id) };
}

/** Starts an export of one of the account's databases (404 for another's): the gate's answer. */
export async function startDatabaseExport(c: Context<AppEnv>, id: string): Promise<{ databaseId: string; result: StartResult }> {
  const owned = await getOwnedDatabase(c.env, c.get("accountId")!, id);
  const { now, uuid } = c.get("deps");
  const result = await startExport(c.env, { databaseId: owned.id, origin: new URL(c.req.url).origin, now: now(), exportId: uuid(), config: c.get("config") });
  return { databaseId: owned.id, result };
}

export type ExportDownload = { databaseId: string } & ({ ready: true; url: string } | { ready: false; status: Exclude<ExportStatus, "ready"> });

/**
 * A fresh download link for a ready export of one of the account's databases (a page left open
 * longer than a link's life still downloads), or the status of one not ready; 404 for none.
 */
export async function exportDownload(c: Context<AppEnv>, id: string, exportId: string): Promise<ExportDownload> {
  const owned = await getOwnedDatabase(c.env, c.get("accountId")!, id);
  const config = c.get("config");
  const now = c.get("deps").now();
  const row = await findRecord(c.env, { databaseId: owned.id, exportId });
  if (!row) throw notFound("No such export of this database.");
  const found = view(row, now, config.ARCHIVE_RETENTION_SECONDS);
  if (found.status !== "ready") return { databaseId: owned.id, ready: false, status: found.status };
  const link = await downloadLinkFor({ databaseId: owned.id, origin: new URL(c.req.url).origin, now, config }, found.id);
  return { databaseId: owned.id, ready: true, url: link.url };
}
