import { createRoute, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { verifyDownloadLink } from "../../auth/links";
import { ArchiveUnreadable, archiveResponse } from "../../exports/archive-response";
import { observedStatus } from "../../exports/export-state";
import { type DownloadRecord, type ExportRef, findExportForDownload } from "../../exports/store";
import type { AppEnv } from "../../http/context";
import { ApiError, errorResponse } from "../../http/errors";
import { log } from "../../http/log";
import { perRequest } from "../../http/per-request";
import { addressCaller, type CallerKey, rateLimit } from "../../http/rate-limiter";
import { errorEnvelope, errorReply, rateLimitedHeaders, retryAfter, uuidPathParam } from "./schemas";

/**
 * docs/api.md, export rule 5, `GET /api/v1/dbs/{id}/exports/{eid}/download?exp&sig` (and HEAD): its
 * contract, its checks and its handler. Checks run in the rule's order: signature, expiry, call
 * rate, then the export record. The signature check is route middleware, which runs before the
 * schema's validators: a missing or bad `exp`/`sig` is 401 SIGNED_URL_INVALID, never 400.
 */

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
 * The call rate is "per caller" (docs/api.md, export rule 4); for a download the caller is the link (its export) and the
 * client address polling it (an IPv6 client by its /64, as rate-limiter.ts counts addresses),
 * never the account that owns the database: whoever holds a leaked link spends that link's
 * allowance from their own address, and the owner's API and other links stay untouched.
 */
export const linkCaller: CallerKey = (c) => `link:${c.req.param("eid")!}|${addressCaller(c)}`;

/**
 * The export record, read while the call rate is checked: the read starts once the link is known
 * genuine (so a forged link still costs no lookup), and the rate limit still decides first (a
 * refused call answers 429 whatever the record says). The two round trips overlap instead of
 * following each other.
 */
const exportRecord = perRequest((c) => findExportForDownload(c.env, refOf(c)));

/** The export a download link names. */
function refOf(c: Context<AppEnv>): ExportRef {
  return { databaseId: c.req.param("id")!, exportId: c.req.param("eid")! };
}

/** The record decides: 503 while prepared, 404, 410, else the archive (or 500 if unreadable). */
export async function serveDownload(c: Context<AppEnv>): Promise<Response> {
  const ref = refOf(c);
  const record = await exportRecord.get(c);
  try {
    return await answer(c, ref, record);
  } catch (err) {
    if (!(err instanceof ArchiveUnreadable)) throw err;
    // The record may be a copy kept for up to RECORD_KEEP_MS, from before another isolate deleted
    // the database and its archives: D1 has the last word before the archive is called unreadable.
    try {
      return await answer(c, ref, await findExportForDownload(c.env, ref, { fresh: true }));
    } catch (again) {
      if (!(again instanceof ArchiveUnreadable)) throw again;
      log("error", "archive unreadable", { request_id: c.get("requestId"), export_id: ref.exportId, database_id: ref.databaseId, reason: again.message });
      throw new ApiError("INTERNAL_ERROR", "The export finished but its archive could not be read. Start a new export.");
    }
  }
}

/** The reply `record` gives at the request's moment; ArchiveUnreadable when a ready archive cannot be read. */
async function answer(c: Context<AppEnv>, ref: ExportRef, record: DownloadRecord | null): Promise<Response> {
  const config = c.get("config");
  // The clock decides, not the sweep: past its deadline an export is failed, past retention
  // expired, from the exact moment, even before the cron has rewritten the record.
  const status = record ? observedStatus(record, c.get("deps").now(), config.ARCHIVE_RETENTION_SECONDS) : "failed";
  if (!record || status === "failed") throw new ApiError("NOT_FOUND", NO_SUCH_EXPORT);
  if (status === "pending" || status === "running") {
    // The answer most polls get: returned in the error envelope rather than thrown, sparing an
    // Error and the unwinding on the hottest path (it is a wait, not a fault).
    const wait = config.PENDING_RETRY_AFTER_SECONDS;
    return errorResponse("export_pending", `The export is still being prepared. Retry in ${wait} second${wait === 1 ? "" : "s"}.`, {
      headers: { "Retry-After": String(wait) },
      extra: { status },
    });
  }
  if (status === "expired") {
    throw new ApiError("EXPORT_EXPIRED", "This export has expired: its archive is past its retention time. Start a new export.");
  }
  if (record.sizeBytes === null || record.sha256 === null) throw new ArchiveUnreadable("the ready record has no size or sha256");
  return archiveResponse(
    c.env.ARCHIVES,
    { ...ref, size: record.sizeBytes, sha256: record.sha256 },
    { method: c.req.method, range: c.req.header("Range") ?? null, ifRange: c.req.header("If-Range") ?? null },
    { waitUntil: (work) => c.executionCtx.waitUntil(work) },
  );
}

export const DownloadParams = z.object({
  id: uuidPathParam("id", "The database the export belongs to."),
  eid: uuidPathParam("eid", "The export to download."),
});

export const DownloadQuery = z.object({
  exp: z.coerce
    .number()
    .int()
    .openapi({
      param: { name: "exp", in: "query", required: true },
      type: "integer",
      format: "int64",
      description: "Link expiry, Unix timestamp in seconds; covered by the signature. Use the value returned by the start request.",
      example: 1900000000,
    }),
  sig: z.string().openapi({
    param: { name: "sig", in: "query", required: true },
    description: "Signature authorising this download. Use the value returned by the start request.",
    example: "AmsyN2m1...",
  }),
});

/** `Range`, documented as a plain parameter so the document keeps the header's usual spelling. */
const rangeParameter = {
  name: "Range",
  in: "header" as const,
  required: false,
  description: "Byte range(s) to resume or fetch part of the archive, e.g. `bytes=1048576-`.",
  schema: { type: "string" as const },
  example: "bytes=0-1023",
};

/** The 503 body: the error envelope plus the export's preparation `status`. */
export const PendingEnvelope = errorEnvelope(["export_pending"], "The export is still being prepared. Retry in 2 seconds.").extend({
  status: z.enum(["pending", "running"]).openapi({ description: "Where the export is: `pending` (not begun) or `running`." }),
});

const sha256Header = {
  "X-Export-SHA256": {
    description: "SHA-256 of the WHOLE archive, lowercase hexadecimal. Compare the saved file with it once complete.",
    required: true,
    schema: { type: "string" as const, pattern: "^[0-9a-f]{64}$" },
  },
};

const archive = { schema: { type: "string" as const, format: "binary", contentMediaType: "application/gzip" } };

export const downloadExportRoute = createRoute({
  method: "get",
  path: "/api/v1/dbs/{id}/exports/{eid}/download",
  operationId: "downloadExport",
  middleware: [signedLink(), exportRecord.ahead(), rateLimit(linkCaller)] as const,
  tags: ["Exports"],
  summary: "Download a finished export",
  description: [
    "Serves the export's gzip archive (a SQL text dump that `sqlite3` restores). Request the link exactly as the start request returned it; no token and no header are needed: `exp` and `sig` carry the authorisation, so treat the link as a secret.",
    "Polling: 503 and 429 are waits (sleep `Retry-After` seconds and ask again); every other non-success reply ends the loop. 404 is permanent for a failed export: start a new one.",
    "The link is valid until `exp` (then 401 `SIGNED_URL_EXPIRED`); the archive's retention is a separate clock, so a valid link can still answer 410.",
  ].join("\n\n"),
  security: [],
  parameters: [rangeParameter],
  request: { params: DownloadParams, query: DownloadQuery },
  responses: {
    200: {
      description: "The whole archive.",
      headers: sha256Header,
      content: { "application/gzip": archive },
    },
    206: {
      description: "The requested part: one range as `application/gzip`, several as `multipart/byteranges`.",
      headers: {
        "Content-Range": { description: "The part served, e.g. `bytes 0-1023/52345` (single range).", schema: { type: "string" } },
        ...sha256Header,
      },
      content: {
        "application/gzip": archive,
        "multipart/byteranges": { schema: { type: "string", format: "binary" } },
      },
    },
    401: errorReply(
      "`SIGNED_URL_INVALID`: signature missing or wrong. `SIGNED_URL_EXPIRED`: the time is past `exp`.",
      ["SIGNED_URL_INVALID", "SIGNED_URL_EXPIRED"],
      "This download link is not valid.",
    ),
    404: errorReply(
      "The export does not exist, belongs to another database, or failed; all three answer identically. Permanent: start a new export.",
      ["NOT_FOUND"],
      "No such export.",
    ),
    410: errorReply("The archive is past its retention time.", ["EXPORT_EXPIRED"], "This export has expired. Start a new export."),
    416: {
      description:
        "Range outside the archive, typically resuming onto a file already at least as large as the archive. Plain text, not JSON. Start again from the beginning.",
      headers: {
        "Content-Range": { description: "`bytes */SIZE`, giving the real archive size.", required: true, schema: { type: "string" } },
      },
      content: { "text/plain": { schema: { type: "string" } } },
    },
    429: errorReply(
      "Too many calls; a wait. Sleep for `Retry-After` seconds. Polls of a link count per link and client address, not against the account's allowance.",
      ["RATE_LIMIT_EXCEEDED"],
      "Too many calls.",
      rateLimitedHeaders,
    ),
    500: errorReply("The export finished but its archive could not be read.", ["INTERNAL_ERROR"], "The archive could not be read."),
    503: {
      description: "The export is still being prepared; a wait. `code` is always `export_pending`.",
      headers: retryAfter("Short polling interval in whole seconds, not a cooldown."),
      content: { "application/json": { schema: PendingEnvelope } },
    },
  },
});
