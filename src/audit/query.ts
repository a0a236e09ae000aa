import { z } from "zod";
import type { AuditQuery } from "../auth/audit-store";

/**
 * The Security log's filters, from a query string (the JSON route's and the page's): `before` (the
 * previous page's `next_before`), `limit` (1-100, 50 unless given), `action`, `resource` (a
 * resource id or kind), and for the page `from` / `to` (dates, YYYY-MM-DD, UTC, both inclusive).
 */

const DAY_MS = 24 * 3600 * 1000;

const day = (field: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, `${field}: Use a date like 2026-01-31.`)
    .refine((text) => !Number.isNaN(Date.parse(`${text}T00:00:00Z`)), `${field}: That is not a date.`)
    .optional();

const blankAsMissing = (value: unknown) => (value === "" ? undefined : value);

export const AuditFilters = z.object({
  before: z.preprocess(blankAsMissing, z.string().regex(/^\d{13}-[0-9a-f]{12}$/, "before: Pass the next_before of the previous page.").optional()),
  limit: z.preprocess(blankAsMissing, z.coerce.number({ message: "limit: Use a whole number from 1 to 100." }).int("limit: Use a whole number from 1 to 100.").min(1, "limit: Use a whole number from 1 to 100.").max(100, "limit: Use a whole number from 1 to 100.").default(50)),
  action: z.preprocess(blankAsMissing, z.string().max(64, "action: That is not an action.").optional()),
  resource: z.preprocess(blankAsMissing, z.string().max(255, "resource: That is not a resource id.").optional()),
  from: z.preprocess(blankAsMissing, day("from")),
  to: z.preprocess(blankAsMissing, day("to")),
});
export type AuditFilters = z.output<typeof AuditFilters>;

/** The filters as a store query: `from` at the day's start, `to` through the day's end. */
export function toAuditQuery(f: AuditFilters): AuditQuery {
  return {
    before: f.before,
    limit: f.limit,
    action: f.action,
    resource: f.resource?.trim() || undefined,
    since: f.from ? Date.parse(`${f.from}T00:00:00Z`) : undefined,
    until: f.to ? Date.parse(`${f.to}T00:00:00Z`) + DAY_MS - 1 : undefined,
  };
}

/** The first problem's sentence (each names its field). */
export function filterProblem(error: z.ZodError): string {
  return error.issues[0]?.message ?? "The filters are not valid.";
}
