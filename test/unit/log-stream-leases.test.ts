import { describe, expect, it } from "vitest";
import { LEASE_RENEW_MS, LEASE_TTL_MS, leaseDecision } from "../../src/logs/stream-leases";

// At most LOG_STREAMS_PER_ACCOUNT live log streams per account: each holds a lease that lapses
// LEASE_TTL_MS after its last renewal, so a viewer whose isolate died frees its slot by itself.

const NOW = 1_800_000_000_000;

describe("leaseDecision", () => {
  it.each<[string, Record<string, number>, number, { allowed: boolean; live: string[]; retryAfterSeconds?: number }]>([
    ["no leases", {}, 2, { allowed: true, live: [] }],
    ["one below the limit", { a: NOW + 1000 }, 2, { allowed: true, live: ["a"] }],
    ["at the limit: wait until the soonest lapses", { a: NOW + 30_500, b: NOW + 50_000 }, 2, { allowed: false, live: ["a", "b"], retryAfterSeconds: 31 }],
    ["a lapsed lease frees its slot", { a: NOW, b: NOW + 50_000 }, 2, { allowed: true, live: ["b"] }],
    ["every lease lapsed", { a: NOW - 1, b: NOW - 60_000 }, 1, { allowed: true, live: [] }],
    ["a wait is at least a second", { a: NOW + 1 }, 1, { allowed: false, live: ["a"], retryAfterSeconds: 1 }],
  ])("%s", (_name, leases, limit, expected) => {
    const decision = leaseDecision(leases, NOW, limit);
    expect(decision.allowed).toBe(expected.allowed);
    expect(Object.keys(decision.leases).sort()).toEqual(expected.live);
    if (!decision.allowed) expect(decision.retryAfterSeconds).toBe(expected.retryAfterSeconds);
  });

  it("renews well within the lease's life", () => {
    expect(LEASE_RENEW_MS * 2).toBeLessThan(LEASE_TTL_MS);
  });
});
