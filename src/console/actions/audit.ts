import type { Context } from "hono";
import { AuditFilters, filterProblem, toAuditQuery } from "../../audit/query";
import { type AuditEntry, listAudit } from "../../auth/audit-store";
import type { AppEnv } from "../../http/context";
import { type Outcome, refuse } from "./outcome";

/**
 * The account's audit log, newest first, a page at a time (`next_before` is null on the last),
 * filtered by action, resource and dates: the JSON route (api/audit.ts) and the Security log page
 * (security-log-page.tsx). Bad filters are refused with a sentence naming the filter.
 */

export { AuditFilters };
export type { AuditEntry };
export type AuditPage = Awaited<ReturnType<typeof listAudit>>;

/** Reads one page of the log for filters as a query string gives them. */
export async function auditPage(c: Context<AppEnv>, query: Record<string, string>): Promise<Outcome<{ page: AuditPage }>> {
  const parsed = AuditFilters.safeParse(query);
  if (!parsed.success) return refuse("INVALID_REQUEST", filterProblem(parsed.error));
  return { ok: true, page: await listAudit(c.env, c.get("accountId")!, toAuditQuery(parsed.data)) };
}
