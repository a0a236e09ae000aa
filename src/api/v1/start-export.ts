import { createRoute, type RouteHandler, z } from "@hono/zod-openapi";
import { bearerAuth, lookUpTokenAhead } from "../../auth/bearer";
import { getOwnedDatabase } from "../../databases/service";
import { startExport } from "../../exports/start";
import type { AppEnv } from "../../http/context";
import { ApiError } from "../../http/errors";
import { tokenFailureLimit } from "../../http/auth-limits";
import { perRequest } from "../../http/per-request";
import { accountCaller, rateLimit } from "../../http/rate-limiter";
import { errorReply, rateLimitFields, retryAfter, uuidPathParam } from "./schemas";

/** docs/api.md, export rule 1: `POST /api/v1/dbs/{id}/export`. */

export const StartExportReply = z.object({
  url: z.url().openapi({
    description: "Complete download link for this export, including the `exp` and `sig` query parameters. Store and request it verbatim.",
    example:
      "https://api.example.com/api/v1/dbs/0b8f1a4e-3c2d-4e5f-8a9b-0c1d2e3f4a5b/exports/7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9/download?exp=1900000000&sig=AmsyN2m1...",
  }),
  expires_at: z.iso.datetime().openapi({ description: "Moment the link stops working (ISO 8601, UTC).", example: "2030-03-17T10:30:00.000Z" }),
});
export type StartExportReply = z.infer<typeof StartExportReply>;

/**
 * The database lookup, made while the call rate is checked: it starts once the token is known
 * good, and the rate limit still decides first (a refused call answers 429 whatever the lookup
 * finds). The two round trips overlap instead of following each other.
 */
const ownedDatabase = perRequest((c) => getOwnedDatabase(c.env, c.get("accountId")!, c.req.param("id")!));

export const startExportRoute = createRoute({
  method: "post",
  path: "/api/v1/dbs/{id}/export",
  operationId: "startExport",
  tags: ["Exports"],
  summary: "Start a database export",
  description: [
    "Starts a fresh export of one of your databases and returns a signed, short-lived download link at once; the export runs after the reply.",
    "Poll the link: it answers 503 while the export is prepared, then serves the archive. No request body is read.",
    "At most one export per database runs at a time (`export_in_flight`), and a database exported recently is refused for the rest of its cooldown window (`cooldown_active`). A failed export does not hold the database in cooldown.",
  ].join("\n\n"),
  security: [{ bearerAuth: [] }],
  middleware: [lookUpTokenAhead(), tokenFailureLimit(), bearerAuth(), ownedDatabase.ahead(), rateLimit(accountCaller)] as const,
  request: { params: z.object({ id: uuidPathParam("id", "The database to export.") }) },
  responses: {
    200: {
      description: "Export started. Poll `url` until it serves the archive.",
      headers: rateLimitFields,
      content: { "application/json": { schema: StartExportReply } },
    },
    400: errorReply("`id` is not a UUID.", ["INVALID_REQUEST"], "id: must be a UUID"),
    401: errorReply(
      "Missing, malformed or revoked API token.",
      ["UNAUTHORIZED"],
      "A valid API token is required: send `Authorization: Bearer <token>`.",
    ),
    404: errorReply(
      "No such database in your account. A database of another account answers identically.",
      ["NOT_FOUND"],
      "No database with this id exists in your account.",
    ),
    429: errorReply(
      [
        "A wait; sleep for `Retry-After` seconds. `code` tells which:",
        "`export_in_flight`: an export of this database is pending or running; poll the link its start returned (short wait).",
        "`cooldown_active`: the database was exported recently; wait out the whole `Retry-After`, there is nothing to poll.",
        "`RATE_LIMIT_EXCEEDED`: too many calls from your account (polls of a download link count apart, per link and client address).",
      ].join(" "),
      ["export_in_flight", "cooldown_active", "RATE_LIMIT_EXCEEDED"],
      "This database was exported recently. Start another export in 120 seconds.",
      { ...retryAfter("Whole seconds to wait before starting again."), ...rateLimitFields },
    ),
    500: errorReply(
      "The export could not be queued; nothing was started and a new start may be made at once.",
      ["INTERNAL_ERROR"],
      "The export could not be queued. Nothing was started; try again.",
    ),
  },
});

const plural = (n: number) => `${n} second${n === 1 ? "" : "s"}`;

/** Owned database -> the gate's single serialised decision -> a signed link, at once. */
export const startExportHandler: RouteHandler<typeof startExportRoute, AppEnv> = async (c) => {
  const owned = await ownedDatabase.get(c);
  const { now, uuid } = c.get("deps");
  const result = await startExport(c.env, {
    databaseId: owned.id,
    origin: new URL(c.req.url).origin,
    now: now(),
    exportId: uuid(),
    config: c.get("config"),
  });
  switch (result.outcome) {
    case "export_in_flight":
      throw new ApiError(
        "export_in_flight",
        `An export of this database is already running. Poll the link its start returned; retry in ${plural(result.retryAfterSeconds)}.`,
        { headers: { "Retry-After": String(result.retryAfterSeconds) } },
      );
    case "cooldown_active":
      throw new ApiError(
        "cooldown_active",
        `This database was exported recently. Start another export in ${plural(result.retryAfterSeconds)}.`,
        { headers: { "Retry-After": String(result.retryAfterSeconds) } },
      );
    case "not_queued":
      throw new ApiError("INTERNAL_ERROR", "The export could not be queued. Nothing was started; try again.");
  }
  // The link is a bearer credential for the archive: no cache may keep the reply.
  c.header("Cache-Control", "no-store");
  return c.json({ url: result.link.url, expires_at: result.link.expiresAt } satisfies StartExportReply, 200);
};
