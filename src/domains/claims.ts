import type { RatePolicy } from "../http/gcra";
import type { Pointing } from "./pointing";
import type { DnsOutcome, DomainStatus } from "./states";

/**
 * Who a custom hostname belongs to: whoever its DNS names, never whoever asked first. Pure: the
 * DomainChecker and the add route apply what these functions decide (table tests in
 * test/unit/domain-claims.test.ts).
 *
 * - A pending claim locks nothing: several apps, of any accounts, may claim one hostname while it
 *   waits (`Pending DNS`, `Error`); it is taken only while an app holds it `Verifying…` or `Active`.
 * - DNS decides: a CNAME to `<subdomain>.<APPS_DOMAIN>` names that app alone. The shared
 *   CUSTOM_DOMAIN_TARGET and the shared apex addresses reach the service but name no app, so such a
 *   claim verifies only with a TXT record at `_cp-challenge.<hostname>` holding its own token.
 * - A hostname that was `Active` for one account needs that TXT record from any other account,
 *   CNAME or not: the subdomain a forgotten CNAME names may have changed hands.
 * - The first verified claim wins; the others go `Error` ("Another app verified this hostname.")
 *   and are not re-checked.
 * - A claim left waiting DOMAIN_CLAIM_DAYS is removed; the app page notes it for 30 days.
 * - Names under the service's own names can never be claimed, from configuration, never from a
 *   request's Host.
 */

/** The label of the TXT record that proves a claim: `_cp-challenge.<hostname>`. */
export const CHALLENGE_LABEL = "_cp-challenge";

/** The sentence of a claim another app won. */
export const LOST_REASON = "Another app verified this hostname.";

/** How long the app page keeps the note of a claim removed for expiry. */
export const EXPIRY_NOTE_DAYS = 30;

const DAY_MS = 86_400_000;

/** Verify now: one press per 10 seconds per domain. */
export const VERIFY_PER_DOMAIN: RatePolicy = { perMinute: 6, burst: 1 };
/** Verify now: 30 presses an hour per account (30 at once, then one every 2 minutes). */
export const VERIFY_PER_ACCOUNT: RatePolicy = { perMinute: 0.5, burst: 30 };

export interface VerificationRecord {
  type: "TXT";
  name: string;
  value: string;
}

/** The TXT record that proves this claim when the hostname points to the shared target or addresses. */
export function verificationRecord(hostname: string, token: string): VerificationRecord {
  return { type: "TXT", name: `${CHALLENGE_LABEL}.${hostname}`, value: token };
}

/**
 * Whether a claim by `accountId` needs the TXT proof even with a CNAME to its own app: the hostname
 * was last `Active` for another account (`lastOwner`), whose forgotten CNAME may name a subdomain
 * that has changed hands since.
 */
export const strangerToHostname = (lastOwner: string | null, accountId: string) => lastOwner !== null && lastOwner !== accountId;

/**
 * Whether DNS proves this claim. `pointing` is what the records say of the hostname for this app;
 * `txt` the values at `_cp-challenge.<hostname>` (null when they were not needed, so not asked);
 * `stranger`: the hostname was last `Active` for another account, so only the TXT record proves it.
 */
export function proveClaim(hostname: string, pointing: Pointing, txt: readonly string[] | null, token: string, stranger = false): DnsOutcome {
  if (!pointing.points) return { kind: "not_pointing", reason: pointing.reason };
  if (pointing.via === "app" && !stranger) return { kind: "points" };
  if (txt !== null && txt.some((value) => value.trim() === token)) return { kind: "points" };
  const name = `${CHALLENGE_LABEL}.${hostname}`;
  if (pointing.via === "app") {
    return { kind: "not_pointing", reason: `${hostname} was verified for another account before, so its CNAME alone does not prove this claim: add a TXT record at ${name} holding this domain's verification value` };
  }
  if (txt === null || txt.length === 0) {
    return { kind: "not_pointing", reason: `${hostname} points to the service, but no TXT record proves which app: add a TXT record at ${name} holding this domain's verification value` };
  }
  return { kind: "not_pointing", reason: `${hostname} points to the service, but the TXT record at ${name} does not hold this domain's verification value` };
}

/** Whether a TXT is needed: the shared target or addresses were how the hostname reached the service, or the claimant is a stranger to it. */
export const needsTxt = (pointing: Pointing, stranger = false) => pointing.points && (pointing.via === "shared" || stranger);

const HELD: readonly DomainStatus[] = ["verifying", "active"];

/** A claim holds its hostname (no other app may) while `Verifying…` or `Active`. */
export const holdsHostname = (status: DomainStatus) => HELD.includes(status);

/** A claim waiting for DNS: `Pending DNS` or `Error`. */
export const isWaiting = (status: DomainStatus) => !holdsHostname(status);

/**
 * DOMAIN_TAKEN for an app adding `hostname`, given every existing claim of it: only while some
 * app holds it, or this app already claims it. Pending claims of other apps lock nothing.
 */
export function hostnameTaken(claims: readonly { appId: string; status: DomainStatus }[], appId: string): boolean {
  return claims.some((claim) => claim.appId === appId || holdsHostname(claim.status));
}

/** A claim another app won: `Error`, and no re-check planned. */
export const isLost = (claim: { status: DomainStatus; nextCheckAt: number | null }) => claim.status === "error" && claim.nextCheckAt === null;

/** When a waiting claim is removed: DOMAIN_CLAIM_DAYS after it started waiting. */
export function claimExpiresAt(waitingSince: number, claimDays: number): number {
  return waitingSince + claimDays * DAY_MS;
}

/** A claim still waiting at `now`, DOMAIN_CLAIM_DAYS after it started, is removed. */
export function claimExpired(claim: { status: DomainStatus; waitingSince: number | null }, now: number, claimDays: number): boolean {
  return isWaiting(claim.status) && claim.waitingSince !== null && now >= claimExpiresAt(claim.waitingSince, claimDays);
}

/** Whether the note of a claim removed at `expiredAt` is still shown at `now`. */
export function expiryNoteShown(expiredAt: number, now: number): boolean {
  return now < expiredAt + EXPIRY_NOTE_DAYS * DAY_MS;
}

/** The one-line note on the app page. */
export function expiryNote(hostname: string, claimDays: number): string {
  return `${hostname} was removed: its DNS did not verify it for this app within ${claimDays} day${claimDays === 1 ? "" : "s"}.`;
}

/**
 * The names no custom domain may be, nor be under: APPS_DOMAIN, CUSTOM_DOMAIN_TARGET and the
 * console's and API's own hostnames (SERVICE_HOSTNAMES), all from configuration.
 */
export function unclaimableDomains(config: { APPS_DOMAIN: string; CUSTOM_DOMAIN_TARGET: string; SERVICE_HOSTNAMES: readonly string[] }): string[] {
  return [config.APPS_DOMAIN, config.CUSTOM_DOMAIN_TARGET, ...config.SERVICE_HOSTNAMES].map((d) => d.trim().toLowerCase().replace(/\.$/, "")).filter((d) => d !== "");
}
