import type { AppRow } from "../apps/store";
import { getConfig } from "../config";
import { describeError, log } from "../http/log";
import { domainChecker, serviceTargets } from "./checker";
import { VERIFY_PER_ACCOUNT, VERIFY_PER_DOMAIN, expiryNote, expiryNoteShown, unclaimableDomains } from "./claims";
import { checkHostname } from "./hostname";
import { type AddRefusal, ADD_REFUSALS, addRefusal, planChangeRefusal } from "./refusals";
import { type DomainRow, type DomainView, countDomains, deleteDomain, getDomainById, insertDomainWithinLimit, isHostnameTaken, listDomains, overdueDomainIds, recentExpiries, viewDomain } from "./store";

/**
 * Custom domains of an app, shared by the console's JSON routes and its pages: add (with the
 * spec's refusals), Verify now, remove, and what app deletion and plan changes need.
 */

export type AddOutcome = { ok: true; domain: DomainRow } | { ok: false; code: "INVALID_REQUEST"; message: string } | ({ ok: false } & AddRefusal);


/** A claim's token, the value of its `_cp-challenge` TXT record: 128 random bits in hex. */
function claimToken(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Adds a `Pending DNS` domain and starts its timer (first re-check DOMAIN_RECHECK_SECONDS later).
 * The limit of 3 and the hostname not being held by an app are kept by the insert itself, so
 * concurrent adds cannot pass them together. Claims of other apps still waiting lock nothing.
 */
export async function addDomain(env: Env, input: { app: AppRow; hostname: string; id: string; now: number }): Promise<AddOutcome> {
  const checked = checkHostname(input.hostname, unclaimableDomains(getConfig(env)));
  if (!checked.ok) return { ok: false, code: "INVALID_REQUEST", message: checked.message };
  const hostname = checked.hostname;
  const refusal = addRefusal({
    appStatus: input.app.status,
    plan: input.app.plan,
    domainCount: await countDomains(env, input.app.id),
    hostnameTaken: await isHostnameTaken(env, hostname, input.app.id),
  });
  if (refusal) return { ok: false, ...refusal };
  const firstCheckAt = input.now + getConfig(env).DOMAIN_RECHECK_SECONDS * 1000;
  const inserted = await insertDomainWithinLimit(env, { id: input.id, hostname, appId: input.app.id, createdAt: input.now, nextCheckAt: firstCheckAt, token: claimToken() });
  if (inserted === "limit") return { ok: false, code: "DOMAIN_LIMIT", message: ADD_REFUSALS.DOMAIN_LIMIT };
  if (inserted === "taken") return { ok: false, code: "DOMAIN_TAKEN", message: ADD_REFUSALS.DOMAIN_TAKEN };
  await domainChecker(env, input.id).track({ domainId: input.id, hostname, firstCheckAt });
  return { ok: true, domain: (await getDomainById(env, input.id))! };
}

/**
 * `Verify now` presses are limited (VERIFY_PER_DOMAIN, VERIFY_PER_ACCOUNT), so nobody can make the
 * service hammer resolvers or the hostname provider's one quota. Each limit is spent atomically
 * by its RateLimiter object; the domain's first, so a refused press costs the account nothing.
 * Returns the seconds to wait, or 0 when the press may go ahead.
 */
export async function verifyWait(env: Env, input: { accountId: string; domainId: string; now: number }): Promise<number> {
  const limiter = (key: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(key));
  const perDomain = await limiter(`verify-domain:${input.domainId}`).take({ now: input.now, policy: VERIFY_PER_DOMAIN });
  if (!perDomain.allowed) return perDomain.retryAfterSeconds;
  const perAccount = await limiter(`verify-account:${input.accountId}`).take({ now: input.now, policy: VERIFY_PER_ACCOUNT });
  return perAccount.allowed ? 0 : perAccount.retryAfterSeconds;
}

/** The sentence of a refused `Verify now`. */
export const verifyWaitMessage = (wait: number) => `Verify now was pressed too often. Wait ${wait} second${wait === 1 ? "" : "s"} before pressing it again.`;

/** `Verify now`: the check runs at once; returns the domain as it is afterwards. */
export async function verifyDomain(env: Env, domain: DomainRow): Promise<DomainRow> {
  await domainChecker(env, domain.id).verifyNow();
  return (await getDomainById(env, domain.id)) ?? domain;
}

/**
 * Remove: the row goes first, so the hostname stops answering for the app at once; then the timer
 * is cancelled and the provider told. The app is not touched.
 */
export async function removeDomain(env: Env, domain: DomainRow): Promise<void> {
  await deleteDomain(env, domain.id);
  await domainChecker(env, domain.id)
    .remove()
    .catch((err: unknown) => log("warn", "custom domain timer not cancelled", { domain_id: domain.id, ...describeError(err) }));
}

/** Deleting an app removes its domains (called by the app's delete before its record goes). */
export async function removeAppDomains(env: Env, appId: string): Promise<void> {
  for (const domain of await listDomains(env, appId)) await removeDomain(env, domain);
}

/** Issue 15: a plan without custom domains is refused while the app has some, naming them. */
export async function planChangeBlocked(env: Env, appId: string, plan: string): Promise<{ outcome: "refused"; code: "PLAN_REQUIRED"; message: string } | null> {
  const refusal = planChangeRefusal(plan, (await listDomains(env, appId)).map((d) => d.hostname));
  return refusal && { outcome: "refused", ...refusal };
}

/** An app's domains as the JSON routes and pages show them. */
export async function viewAppDomains(env: Env, app: AppRow): Promise<DomainView[]> {
  const targets = serviceTargets(env, app.subdomain);
  return (await listDomains(env, app.id)).map((row) => viewDomain(row, targets));
}

export function viewOne(env: Env, app: AppRow, row: DomainRow): DomainView {
  return viewDomain(row, serviceTargets(env, app.subdomain));
}

/** The one-line notes of the app's claims removed for expiry in the last 30 days, newest first. */
export async function expiryNotes(env: Env, appId: string, now: number): Promise<string[]> {
  const days = getConfig(env).DOMAIN_CLAIM_DAYS;
  return (await recentExpiries(env, appId, now)).filter((note) => expiryNoteShown(note.expiredAt, now)).map((note) => expiryNote(note.hostname, days));
}

/** How late a check may be before the scheduled sweep wakes its checker. */
export const OVERDUE_MS = 10 * 60_000;

/**
 * The scheduled sweep: every claim whose check is more than OVERDUE_MS late gets its checker
 * woken, so no domain is left unchecked (an `Active` domain from before `Active` domains were
 * re-checked has its first re-check due at the migration).
 */
export async function wakeOverdueDomains(env: Env, now: number): Promise<number> {
  const ids = await overdueDomainIds(env, now - OVERDUE_MS);
  for (const id of ids) await domainChecker(env, id).wake();
  return ids.length;
}
