import { createRoute, z } from "@hono/zod-openapi";
import { errorEnvelope, errorReply, rateLimitedHeaders, retryAfter, uuidPathParam } from "./schemas";

/**
 * SPEC.md endpoint 2, `GET /api/v1/dbs/{id}/exports/{eid}/download?exp&sig`: its contract for the
 * OpenAPI document. The handler lives with the export download code; it answers a missing or bad
 * `exp`/`sig` with 401 SIGNED_URL_INVALID (not 400), so it reads the query itself rather than
 * through a validator built from `DownloadQuery`.
 */

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
    429: errorReply("Too many calls; a wait. Sleep for `Retry-After` seconds.", ["RATE_LIMIT_EXCEEDED"], "Too many calls.", rateLimitedHeaders),
    500: errorReply("The export finished but its archive could not be read.", ["INTERNAL_ERROR"], "The archive could not be read."),
    503: {
      description: "The export is still being prepared; a wait. `code` is always `export_pending`.",
      headers: retryAfter("Short polling interval in whole seconds, not a cooldown."),
      content: { "application/json": { schema: PendingEnvelope } },
    },
  },
});
