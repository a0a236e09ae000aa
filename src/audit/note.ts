import type { Context } from "hono";
import { sqlRunFields } from "./actions";

declare module "hono" {
  interface ContextVariableMap {
    /** Set by a page that answered a refusal with a redirect and an error message (see flash.ts). */
    auditRefused?: boolean;
    /** Field names a page gives its audit row instead of its form's (an SQL run's counts). */
    auditFields?: string[];
  }
}

/** A page refused the change but answers with a redirect: its audit row says refused. */
export function noteRefused(c: Context): void {
  c.set("auditRefused", true);
}

/** A page's SQL run: its row counts the statements and rows written. */
export function noteSqlRun(c: Context, results: readonly { rows_written?: unknown }[]): void {
  c.set("auditFields", sqlRunFields(results));
}
