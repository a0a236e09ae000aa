import { describe, expect, it } from "vitest";
import { cloudflareOutcome } from "../../src/domains/cloudflare";

// Issue 15, the cloudflare provider: poll `status` and `ssl.status` until active. The hostname's
// status decides the route (Active), the certificate's status whether HTTPS is served.

describe("cloudflareOutcome", () => {
  it.each([
    ["pending", "initializing", { kind: "pending" }],
    ["pending", "pending_validation", { kind: "pending" }],
    ["active", "pending_validation", { kind: "active", https: false, waitingForCertificate: true }],
    ["active", "pending_issuance", { kind: "active", https: false, waitingForCertificate: true }],
    ["active", "pending_deployment", { kind: "active", https: false, waitingForCertificate: true }],
    ["active", "active", { kind: "active", https: true, waitingForCertificate: false }],
    ["blocked", "active", { kind: "failed", reason: "Cloudflare reports the hostname as blocked." }],
    ["moved", "pending_validation", { kind: "failed", reason: "Cloudflare reports the hostname as moved." }],
    ["pending", "validation_timed_out", { kind: "failed", reason: "Cloudflare could not issue the certificate (validation_timed_out)." }],
    ["active", "issuance_timed_out", { kind: "failed", reason: "Cloudflare could not issue the certificate (issuance_timed_out)." }],
  ] as const)("status %s, ssl %s", (status, ssl, outcome) => {
    expect(cloudflareOutcome({ id: "x", hostname: "shop.example.com", status, ssl: { status: ssl } })).toEqual(outcome);
  });

  it("names the first verification or validation error", () => {
    expect(cloudflareOutcome({ id: "x", hostname: "s.example.com", status: "blocked", verification_errors: ["custom hostname does not CNAME to this zone."] })).toEqual({
      kind: "failed",
      reason: "Cloudflare reports the hostname as blocked: custom hostname does not CNAME to this zone.",
    });
  });
});
