/**
 * docs/domains.md, rules 1-5: every domain starts `Pending DNS`; the automatic re-check
 * (every DOMAIN_RECHECK_SECONDS, 45 by default) moves it to `Verifying…` once the record points to
 * the service, and the route is put in place; `Verify now` before the record has spread fails the
 * check and the domain shows `Error` with its reason; once the route is established and the check
 * passed it is `Active`. Pure: the DomainChecker applies what these functions decide.
 *
 * Where the spec is silent (issue 15, README "Custom domains"):
 * - An `Error` domain keeps being re-checked on the same cadence, and `Verify now` retries it; a
 *   check that passes moves it on to `Verifying…` like a `Pending DNS` one.
 * - A failed DNS lookup (resolver down, timeout) is shown as `Error` with "DNS lookup failed: ...",
 *   whichever check met it.
 * - While `Verifying…`, each step checks DNS again and asks the hostname provider; DNS no longer
 *   pointing or the provider failing is `Error` with the reason.
 * - `Active` is re-checked every DOMAIN_ACTIVE_RECHECK_SECONDS (while its certificate is still
 *   coming, at the `Verifying…` pace): DNS no longer pointing to its app is `Error`, and the
 *   domain stops being served, so a dangling record serves nobody.
 */

export const DOMAIN_STATUSES = ["pending_dns", "verifying", "active", "error"] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

/** docs/domains.md, rule 2: the badge values, exactly (one ellipsis character). */
export const DOMAIN_BADGES: Record<DomainStatus, "Pending DNS" | "Verifying…" | "Active" | "Error"> = {
  pending_dns: "Pending DNS",
  verifying: "Verifying…",
  active: "Active",
  error: "Error",
};

export type CheckTrigger = "recheck" | "verify_now";

/** What a DNS check found. */
export type DnsOutcome = { kind: "points" } | { kind: "not_pointing"; reason: string } | { kind: "lookup_failed"; reason: string };

/** What the hostname provider says of the route and certificate. */
export type ProviderOutcome = { kind: "pending" } | { kind: "active"; https: boolean; waitingForCertificate: boolean } | { kind: "failed"; reason: string };

/** When the next step runs: after the re-check interval, soon (provider polling), after the `Active` re-check interval, or never. */
export type NextCheck = "recheck" | "soon" | "active" | "none";

export interface Transition {
  status: DomainStatus;
  reason: string | null;
  /** Put the route in place (ask the provider for the hostname) before the next step. */
  putRoute: boolean;
  next: NextCheck;
}

/** A DNS check of a `Pending DNS` or `Error` domain, automatic or by `Verify now`. */
export function afterDnsCheck(status: "pending_dns" | "error", trigger: CheckTrigger, dns: DnsOutcome, previousReason: string | null): Transition {
  if (dns.kind === "points") return { status: "verifying", reason: null, putRoute: true, next: "soon" };
  if (dns.kind === "lookup_failed") return { status: "error", reason: dns.reason, putRoute: false, next: "recheck" };
  if (status === "pending_dns" && trigger === "recheck") return { status: "pending_dns", reason: previousReason, putRoute: false, next: "recheck" };
  return { status: "error", reason: dns.reason, putRoute: false, next: "recheck" };
}

/** One step of a `Verifying…` domain (or an `Active` one waiting for its certificate): DNS again, then the provider. */
export function afterVerifyStep(status: "verifying" | "active", dns: DnsOutcome, provider: ProviderOutcome | null): Transition & { https?: boolean } {
  if (dns.kind !== "points") return { status: "error", reason: dns.reason, putRoute: false, next: "recheck" };
  if (provider === null || provider.kind === "pending") return { status, reason: null, putRoute: false, next: "soon" };
  if (provider.kind === "failed") return { status: "error", reason: provider.reason, putRoute: false, next: "recheck" };
  return { status: "active", reason: null, putRoute: false, next: provider.waitingForCertificate ? "soon" : "active", https: provider.https };
}
