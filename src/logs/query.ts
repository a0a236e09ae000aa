/**
 * The runtime log search (`GET /console/api/apps/{id}/logs?since=&until=&q=&limit=`): its
 * parameters, validated, and the rule that picks lines. Times are ms since the epoch or ISO 8601.
 */
import { z } from "zod";
import type { LogLine } from "../runtime/types";

export const DEFAULT_LOG_LIMIT = 200;
export const MAX_LOG_LIMIT = 1000;
export const MAX_QUERY_CHARS = 200;

const moment = z
  .string()
  .trim()
  .min(1, "must be a time: ms since the epoch or an ISO 8601 date")
  .transform((value, ctx) => {
    const at = /^\d{1,15}$/.test(value) ? Number(value) : /^\d{4}-\d\d-\d\d/.test(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(at)) {
      ctx.addIssue({ code: "custom", message: "must be a time: ms since the epoch or an ISO 8601 date" });
      return z.NEVER;
    }
    return at;
  });

export const LogQuery = z
  .object({
    since: moment.optional(),
    until: moment.optional(),
    q: z.string().max(MAX_QUERY_CHARS, `must be at most ${MAX_QUERY_CHARS} characters`).optional(),
    limit: z
      .string()
      .regex(/^\d{1,4}$/, `must be a whole number from 1 to ${MAX_LOG_LIMIT}`)
      .transform(Number)
      .pipe(z.number().int().min(1, `must be a whole number from 1 to ${MAX_LOG_LIMIT}`).max(MAX_LOG_LIMIT, `must be a whole number from 1 to ${MAX_LOG_LIMIT}`))
      .optional(),
  })
  .strict()
  .refine((v) => v.since === undefined || v.until === undefined || v.until >= v.since, { path: ["until"], message: "must not be before since" });

export interface LogSearch {
  since?: number;
  until?: number;
  /** Text the line must contain, case-insensitive. */
  q?: string;
  limit: number;
}

export function toSearch(query: z.output<typeof LogQuery>): LogSearch {
  return { ...query, q: query.q?.trim() || undefined, limit: query.limit ?? DEFAULT_LOG_LIMIT };
}

/** Whether a line answers the search (time window inclusive, text case-insensitive). */
export function matchesSearch(line: LogLine, search: Omit<LogSearch, "limit">): boolean {
  if (search.since !== undefined && line.at < search.since) return false;
  if (search.until !== undefined && line.at > search.until) return false;
  return search.q === undefined || line.text.toLowerCase().includes(search.q.toLowerCase());
}

/** The last `limit` matching lines, oldest first, from lines oldest first. */
export function pickLines(lines: readonly LogLine[], search: LogSearch): LogLine[] {
  const out: LogLine[] = [];
  for (let i = lines.length - 1; i >= 0 && out.length < search.limit; i--) if (matchesSearch(lines[i]!, search)) out.push(lines[i]!);
  return out.reverse();
}
