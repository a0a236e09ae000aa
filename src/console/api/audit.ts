import { createRoute, z } from "@hono/zod-openapi";
import { requireSession } from "../../auth/session";
import { auditPage } from "../actions/audit";
import { orThrow } from "../actions/outcome";
import { AuditEntry } from "./account-schemas";
import { SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonReply } from "./openapi";

const filter = (description: string) => z.string().optional().openapi({ description });

/** The filters as the document lists them; the action reads them (audit/query.ts), each refusal naming its filter. */
const AuditQueryParams = z.object({
  before: filter("The previous page's `next_before`."),
  limit: filter("Entries per page, 1 to 100; 50 unless given."),
  action: filter("One action, e.g. `app.deploy`."),
  resource: filter("A resource id, or a kind (app, database, domain, token, ...)."),
  from: filter("First day, YYYY-MM-DD (UTC)."),
  to: filter("Last day, YYYY-MM-DD (UTC), inclusive."),
});

const auditRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "readAuditLog",
  tags: ["Security"],
  summary: "Read the audit log",
  description: "Every change to the account and its resources, newest first, a page at a time: who, from where, what, and the outcome. Values of secrets are never kept.",
  middleware: [requireSession] as const,
  request: { query: AuditQueryParams },
  responses: {
    200: jsonReply(z.object({ entries: z.array(AuditEntry), next_before: z.string().nullable().openapi({ description: "Pass as `before` for the next page; null on the last." }) }), "A page of entries."),
    400: errorReply("A filter is not valid (`limit: ...`).", ["INVALID_REQUEST"]),
    ...SIGNED_IN_REPLIES,
  },
});

/**
 * `GET /console/api/audit?before=&limit=&action=&resource=` (also `from`, `to`): the account's
 * audit log, newest first, `{entries, next_before}`; `next_before` is null on the last page.
 */
export const auditRoutes = consoleRouter().openapi(auditRoute, async (c) => c.json(orThrow(await auditPage(c, c.req.query())).page, 200));
