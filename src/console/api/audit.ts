import { Hono } from "hono";
import { AuditFilters, filterProblem, toAuditQuery } from "../../audit/query";
import { listAudit } from "../../auth/audit-store";
import { requireSession } from "../../auth/session";
import type { AppEnv } from "../../http/context";
import { invalid } from "../../http/errors";

/**
 * `GET /console/api/audit?before=&limit=&action=&resource=` (also `from`, `to`): the account's
 * audit log, newest first, `{entries, next_before}`; `next_before` is null on the last page.
 */
export const auditRoutes = new Hono<AppEnv>().get("/", requireSession, async (c) => {
  const parsed = AuditFilters.safeParse(c.req.query());
  if (!parsed.success) throw invalid(filterProblem(parsed.error));
  return c.json(await listAudit(c.env, c.get("accountId")!, toAuditQuery(parsed.data)));
});
