import { and, eq } from "drizzle-orm";
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { verifyDownloadLink } from "../../auth/links";
import { database } from "../../db/client";
import { databases, exports } from "../../db/schema";
import { ArchiveUnreadable, archiveResponse } from "../../exports/archive-response";
import { isPastRetention } from "../../exports/retention";
import type { AppEnv } from "../../http/context";
import { ApiError } from "../../http/errors";
import { log } from "../../http/log";
import { accountKey, addressCaller, type CallerKey, rateLimit } from "../../http/rate-limiter";

/**
 * SPEC.md endpoint 2, `GET /api/v1/dbs/{id}/exports/{eid}/download?exp&sig` (and HEAD). Its
 * OpenAPI contract is `downloadExportRoute` in download.schema.ts. Checks run in the spec's order:
 * signature, expiry, call rate, then the export record.
 */

/** The route pattern (Hono syntax) of the download link. */
export const DOWNLOAD_PATH = "/api/v1/dbs/:id/exports/:eid/download";

/** One sentence for a missing export, another database's export and a failed one: all look alike. */
export const NO_SUCH_EXPORT = "No such export. If it failed, start a new export.";

/**
 * 401 unless `exp` and `sig` sign this very path and `exp` has not passed. Runs first, so a
 * request without a genuine link costs no lookup and no rate-limit state.
 */
export function signedLink(): MiddlewareHandler<AppEnv> {
  return async function signedLink(c, next) {
    const url = new URL(c.req.url);
    const verdict = await verifyDownloadLink(c.get("config").LINK_SIGNING_KEYS, {
      path: url.pathname,
      exp: url.searchParams.get("exp"),
      sig: url.searchParams.get("sig"),
      now: c.get("deps").now(),
      // The link is signed for GET; HEAD asks about the same resource.
      method: "GET",
    });
    if (verdict.ok) return next();
    throw verdict.code === "SIGNED_URL_EXPIRED"
      ? new ApiError("SIGNED_URL_EXPIRED", "This download link has expired. Start a new export for a new link.")
      : new ApiError("SIGNED_URL_INVALID", "This download link is not valid. Request it exactly as the start request returned it.");
  };
}

/**
 * Downloads count against the account that owns the database, so a script's starts and polls
 * share one allowance; a link to a database deleted since counts against the client address.
 */
export const linkOwner: CallerKey = async (c) => {
  const owner = await database(c.env)
    .select({ accountId: databases.accountId })
    .from(databases)
    .where(eq(databases.id, c.req.param("id")!))
    .get();
  return owner ? accountKey(owner.accountId) : addressCaller(c);
};

/** The record decides: 503 while prepared, 404, 410, else the archive (or 500 if unreadable). */
export async function serveDownload(c: Context<AppEnv>): Promise<Response> {
  const { id, eid } = c.req.param() as { id: string; eid: string };
  const config = c.get("config");
  const record = await database(c.env)
    .select()
    .from(exports)
    .where(and(eq(exports.id, eid), eq(exports.databaseId, id)))
    .get();
  if (!record || record.status === "failed") throw new ApiError("NOT_FOUND", NO_SUCH_EXPORT);
  if (record.status === "pending" || record.status === "running") {
    const wait = config.PENDING_RETRY_AFTER_SECONDS;
    throw new ApiError("export_pending", `The export is still being prepared. Retry in ${wait} second${wait === 1 ? "" : "s"}.`, {
      headers: { "Retry-After": String(wait) },
      extra: { status: record.status },
    });
  }
  // The clock decides, not the sweep: 410 holds from the exact second, even before the cron runs.
  if (record.status === "expired" || isPastRetention(record.finishedAt ?? 0, config.ARCHIVE_RETENTION_SECONDS, c.get("deps").now())) {
    throw new ApiError("EXPORT_EXPIRED", "This export has expired: its archive is past its retention time. Start a new export.");
  }
  try {
    if (record.sizeBytes === null || record.sha256 === null) throw new ArchiveUnreadable("the ready record has no size or sha256");
    return await archiveResponse(
      c.env.ARCHIVES,
      { databaseId: id, exportId: eid, size: record.sizeBytes, sha256: record.sha256 },
      { method: c.req.method, range: c.req.header("Range") ?? null, ifRange: c.req.header("If-Range") ?? null },
      { waitUntil: (work) => c.executionCtx.waitUntil(work) },
    );
  } catch (err) {
    if (!(err instanceof ArchiveUnreadable)) throw err;
    log("error", "archive unreadable", { request_id: c.get("requestId"), export_id: eid, database_id: id, reason: err.message });
    throw new ApiError("INTERNAL_ERROR", "The export finished but its archive could not be read. Start a new export.");
  }
}

/** The download route: signature and expiry, then the call rate, then the record. */
export const downloadRoutes = new Hono<AppEnv>().get(DOWNLOAD_PATH, signedLink(), rateLimit(linkOwner), serveDownload);
