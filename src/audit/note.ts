import type { Context } from "hono";

declare module "hono" {
  interface ContextVariableMap {
    /** Set by a page that answered a refusal with a redirect and an error message (see flash.ts). */
    auditRefused?: boolean;
  }
}

/** A page refused the change but answers with a redirect: its audit row says refused. */
export function noteRefused(c: Context): void {
  c.set("auditRefused", true);
}
