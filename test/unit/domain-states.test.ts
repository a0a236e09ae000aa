import { describe, expect, it } from "vitest";
import { DOMAIN_BADGES, type DnsOutcome, afterDnsCheck, afterVerifyStep } from "../../src/domains/states";

// SPEC.md States "Custom domain": Pending DNS -(automatic re-check, record points)-> Verifying…
// (route put in place); Pending DNS -(Verify now before the record has spread)-> Error with the
// reason; Verifying… -(route established, check passed)-> Active. Moves out of Error are not in
// the spec: issue 15 keeps re-checking Error and lets Verify now retry.

const POINTS: DnsOutcome = { kind: "points" };
const NOT: DnsOutcome = { kind: "not_pointing", reason: "shop.example.com has no CNAME record; expected a CNAME to web.apps.example.net" };
const FAILED: DnsOutcome = { kind: "lookup_failed", reason: "DNS lookup failed: the resolver answered SERVFAIL" };

describe("badges", () => {
  it("are exactly the spec's values, Verifying with one ellipsis character", () => {
    expect(Object.values(DOMAIN_BADGES)).toEqual(["Pending DNS", "Verifying…", "Active", "Error"]);
    expect(DOMAIN_BADGES.verifying).toBe("Verifying\u2026");
  });
});

describe("afterDnsCheck", () => {
  it.each([
    ["Pending DNS, re-check, points", "pending_dns", "recheck", POINTS, { status: "verifying", reason: null, putRoute: true, next: "soon" }],
    ["Pending DNS, re-check, not yet", "pending_dns", "recheck", NOT, { status: "pending_dns", reason: null, putRoute: false, next: "recheck" }],
    ["Pending DNS, Verify now, not yet", "pending_dns", "verify_now", NOT, { status: "error", reason: NOT.kind === "not_pointing" ? NOT.reason : "", putRoute: false, next: "recheck" }],
    ["Pending DNS, Verify now, points", "pending_dns", "verify_now", POINTS, { status: "verifying", reason: null, putRoute: true, next: "soon" }],
    ["Pending DNS, re-check, resolver failed", "pending_dns", "recheck", FAILED, { status: "error", reason: "DNS lookup failed: the resolver answered SERVFAIL", putRoute: false, next: "recheck" }],
    ["Error, re-check, still not", "error", "recheck", NOT, { status: "error", reason: NOT.kind === "not_pointing" ? NOT.reason : "", putRoute: false, next: "recheck" }],
    ["Error, re-check, points now", "error", "recheck", POINTS, { status: "verifying", reason: null, putRoute: true, next: "soon" }],
    ["Error, Verify now, points now", "error", "verify_now", POINTS, { status: "verifying", reason: null, putRoute: true, next: "soon" }],
    ["Error, Verify now, resolver failed", "error", "verify_now", FAILED, { status: "error", reason: "DNS lookup failed: the resolver answered SERVFAIL", putRoute: false, next: "recheck" }],
  ] as const)("%s", (_name, status, trigger, dns, expected) => {
    expect(afterDnsCheck(status, trigger, dns, null)).toEqual(expected);
  });
});

describe("afterVerifyStep", () => {
  it.each([
    ["route not yet in place", "verifying", POINTS, { kind: "pending" }, { status: "verifying", reason: null, putRoute: false, next: "soon" }],
    ["route established, HTTP only (local)", "verifying", POINTS, { kind: "active", https: false, waitingForCertificate: false }, { status: "active", reason: null, putRoute: false, next: "active", https: false }],
    ["route established, certificate coming", "verifying", POINTS, { kind: "active", https: false, waitingForCertificate: true }, { status: "active", reason: null, putRoute: false, next: "soon", https: false }],
    ["route and certificate", "verifying", POINTS, { kind: "active", https: true, waitingForCertificate: false }, { status: "active", reason: null, putRoute: false, next: "active", https: true }],
    ["Active, certificate arrives", "active", POINTS, { kind: "active", https: true, waitingForCertificate: false }, { status: "active", reason: null, putRoute: false, next: "active", https: true }],
    ["provider failed", "verifying", POINTS, { kind: "failed", reason: "Cloudflare refused the hostname: 1406 Duplicate custom hostname found." }, { status: "error", reason: "Cloudflare refused the hostname: 1406 Duplicate custom hostname found.", putRoute: false, next: "recheck" }],
    ["Active re-check, DNS no longer names the app: Error, no longer served", "active", NOT, null, { status: "error", reason: NOT.kind === "not_pointing" ? NOT.reason : "", putRoute: false, next: "recheck" }],
    ["DNS moved away meanwhile", "verifying", NOT, { kind: "pending" }, { status: "error", reason: NOT.kind === "not_pointing" ? NOT.reason : "", putRoute: false, next: "recheck" }],
    ["resolver failed meanwhile", "verifying", FAILED, null, { status: "error", reason: "DNS lookup failed: the resolver answered SERVFAIL", putRoute: false, next: "recheck" }],
  ] as const)("%s", (_name, status, dns, provider, expected) => {
    expect(afterVerifyStep(status, dns, provider)).toEqual(expected);
  });
});
