import type { AppRow } from "../../apps/store";
import { addDomain, removeDomain, verifyDomain, verifyWait, verifyWaitMessage, viewAppDomains, viewOne } from "../../domains/service";
import { type DomainRow, type DomainView, getDomain } from "../../domains/store";
import { notFound } from "../../http/errors";
import type { Caller } from "./caller";
import { type Outcome, type Refusal, refuse } from "./outcome";

/**
 * An app's custom domains (docs/domains.md), for the JSON routes (api/domains.ts) and the Domains
 * tab's forms (pages/domain-pages.tsx) alike: add, Verify now, remove.
 */

export const NO_SUCH_DOMAIN = "No custom domain with this hostname exists on this app.";

/** The app's custom domains as the console shows them. */
export function listDomains(caller: Caller, app: AppRow): Promise<DomainView[]> {
  return viewAppDomains(caller.env, app);
}

/** One of the app's domains by hostname (404 NOT_FOUND when it has none). */
export async function ownedDomain(caller: Caller, app: AppRow, hostname: string): Promise<DomainRow> {
  const domain = await getDomain(caller.env, app.id, hostname);
  if (!domain) throw notFound(NO_SUCH_DOMAIN);
  return domain;
}

/** Adds a domain waiting for its DNS record; a refused hostname is INVALID_REQUEST naming `hostname`, the spec's refusals keep their codes. */
export async function addCustomDomain(caller: Caller, app: AppRow, hostname: string): Promise<Outcome<{ row: DomainRow; domain: DomainView }>> {
  const added = await addDomain(caller.env, { app, hostname, id: caller.deps.uuid(), now: caller.deps.now() });
  if (!added.ok) return refuse(added.code, added.message, added.code === "INVALID_REQUEST" ? "hostname" : undefined);
  return { ok: true, row: added.domain, domain: viewOne(caller.env, app, added.domain) };
}

/** Verify now pressed too often: how long to wait. */
export interface VerifyTooSoon extends Refusal {
  code: "RATE_LIMIT_EXCEEDED";
  retryAfterSeconds: number;
}

/** Verify now: checks the domain's DNS at once, unless pressed too often for the domain or the account. */
export async function verifyNow(caller: Caller, app: AppRow, domain: DomainRow): Promise<Outcome<{ row: DomainRow; domain: DomainView }> | VerifyTooSoon> {
  const wait = await verifyWait(caller.env, { accountId: caller.accountId, domainId: domain.id, now: caller.deps.now() });
  if (wait > 0) return { ok: false, code: "RATE_LIMIT_EXCEEDED", message: verifyWaitMessage(wait), retryAfterSeconds: wait };
  const checked = await verifyDomain(caller.env, domain);
  return { ok: true, row: checked, domain: viewOne(caller.env, app, checked) };
}

/** Removes the domain: it stops answering for the app at once. */
export function removeCustomDomain(caller: Caller, domain: DomainRow): Promise<void> {
  return removeDomain(caller.env, domain);
}
