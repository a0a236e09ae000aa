import { createDownloadLink, type DownloadLink } from "../auth/links";
import type { Config } from "../config";
import { type BeginExportResult, exportGate } from "./export-gate";

/**
 * Starting an export, the same way for the public API and the console's `Start export`: the
 * database's gate decides, and a started export comes with its signed download link.
 */

/** What a start asks for: an owned database, and the request's origin, clock and new id. */
export interface StartRequest {
  databaseId: string;
  /** The origin the download link points at (the request's own). */
  origin: string;
  now: number;
  exportId: string;
  config: Config;
}

export type StartResult = Exclude<BeginExportResult, { outcome: "started" }> | { outcome: "started"; exportId: string; link: DownloadLink };

/** Passes the start through the database's ExportGate and signs the link of a started export. */
export async function startExport(env: Env, request: StartRequest): Promise<StartResult> {
  const { config } = request;
  const result = await exportGate(env, request.databaseId).begin({
    databaseId: request.databaseId,
    exportId: request.exportId,
    now: request.now,
    cooldownSeconds: config.EXPORT_COOLDOWN_SECONDS,
    inFlightRetryAfterSeconds: config.IN_FLIGHT_RETRY_AFTER_SECONDS,
  });
  if (result.outcome !== "started") return result;
  return { ...result, link: await downloadLinkFor(request, result.exportId) };
}

/** A fresh signed link to an export's archive, valid for LINK_TTL_SECONDS from `now`. */
export function downloadLinkFor(request: Omit<StartRequest, "exportId">, exportId: string): Promise<DownloadLink> {
  return createDownloadLink({
    keys: request.config.LINK_SIGNING_KEYS,
    origin: request.origin,
    databaseId: request.databaseId,
    exportId,
    now: request.now,
    ttlSeconds: request.config.LINK_TTL_SECONDS,
  });
}
