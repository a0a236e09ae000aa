import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { emissionIntervalUs, gcra, gcraGrant, type GcraGrant, type RatePolicy, refunded } from "../../src/http/gcra";
import { CallLeases, LEASE_MAX, LEASE_MS, leaseCeiling } from "../../src/http/rate-lease";

// SPEC.md Limits, "Call rate: per caller, across every endpoint": calls granted ahead to one
// isolate (src/http/rate-lease.ts) must never let a caller past the limit its object keeps.

const T0 = Date.UTC(2030, 0, 1);

/** The caller's object as the RateLimiter keeps it: refund, then gcraGrant (rate-limiter.ts `take`). */
function objectOf(policy: RatePolicy) {
  const state = { tat: null as number | null, granted: 0, asked: 0 };
  return {
    state,
    take: async (input: { now: number; policy: RatePolicy; count: number; refund: number }): Promise<GcraGrant> => {
      // The round trip: other requests of the same isolate run meanwhile.
      await Promise.resolve();
      state.asked++;
      const refund = state.tat === null ? 0 : Math.min(input.refund, LEASE_MAX);
      state.tat = refunded(state.tat, refund, input.policy);
      // What the object counts as granted: calls handed back are no longer the caller's.
      state.granted -= refund;
      const grant = gcraGrant(state.tat, input.now, input.policy, input.count);
      if (grant.allowed) {
        state.tat = grant.tat;
        state.granted += grant.granted;
      }
      return grant;
    },
  };
}

describe("leaseCeiling", () => {
  it.each([
    [{ perMinute: 120, burst: 30 }, 3],
    [{ perMinute: 60, burst: 3 }, 1],
    [{ perMinute: 1_000_000, burst: 1_000_000 }, 16],
  ])("%o grants at most %i at once", (policy, ceiling) => expect(leaseCeiling(policy)).toBe(ceiling));
});

describe("CallLeases", () => {
  const policy = { perMinute: 120, burst: 30 };

  it("a caller calling fast is asked about in grants: 30 calls at one instant, 30 pass, the object asked fewer times", async () => {
    const object = objectOf(policy);
    const leases = new CallLeases();
    const decisions = [];
    for (let i = 0; i < 31; i++) decisions.push(await leases.spend("k", () => object, T0, policy));
    expect(decisions.map((d) => d.allowed)).toEqual([...Array(30).fill(true), false]);
    // Each call reports what it would have had the object decided it alone.
    let tat: number | null = null;
    for (const d of decisions) {
      const alone = gcra(tat, T0, policy);
      if (alone.allowed) tat = alone.tat;
      expect({ remaining: d.remaining, reset: d.resetSeconds, retry: d.retryAfterSeconds }).toEqual({ remaining: alone.remaining, reset: alone.resetSeconds, retry: alone.retryAfterSeconds });
    }
    expect(object.state.asked).toBeLessThan(20);
  });

  it("calls not spent within LEASE_MS go back with the next grant", async () => {
    const object = objectOf(policy);
    const leases = new CallLeases();
    // The second call comes fast, so it asks for two: one is held.
    for (let i = 0; i < 2; i++) await leases.spend("k", () => object, T0, policy);
    expect(leases.held("k")).toBe(1);
    expect(object.state.granted).toBe(3);
    await leases.spend("k", () => object, T0 + LEASE_MS, policy);
    expect(leases.held("k")).toBe(0);
    // The object now counts exactly the three calls spent.
    let tat: number | null = null;
    for (const at of [T0, T0, T0 + LEASE_MS]) tat = gcra(tat, at, policy).tat;
    expect(object.state.tat).toBe(tat);
  });

  it("keeps callers apart", async () => {
    const a = objectOf({ perMinute: 60, burst: 2 });
    const b = objectOf({ perMinute: 60, burst: 2 });
    const leases = new CallLeases();
    const p = { perMinute: 60, burst: 2 };
    for (let i = 0; i < 2; i++) expect((await leases.spend("a", () => a, T0, p)).allowed).toBe(true);
    expect((await leases.spend("a", () => a, T0, p)).allowed).toBe(false);
    expect((await leases.spend("b", () => b, T0, p)).allowed).toBe(true);
  });

  const policies = fc.constantFrom<RatePolicy>({ perMinute: 120, burst: 30 }, { perMinute: 60, burst: 3 }, { perMinute: 600, burst: 200 }, { perMinute: 7, burst: 1 });
  const steps = fc.array(fc.record({ dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3000 })), together: fc.integer({ min: 1, max: 6 }) }), { minLength: 1, maxLength: 60 });

  /** One caller's object and this isolate's leases, and `together` calls of that caller at `now`. */
  function caller(policy: RatePolicy) {
    const object = objectOf(policy);
    const leases = new CallLeases();
    const calls = (now: number, together: number) => Promise.all(Array.from({ length: together }, () => leases.spend("k", () => object, now, policy)));
    return { object, leases, calls };
  }

  it("model: whatever the timing and concurrency, the calls passed stay within the limit and within what the object granted", async () => {
    await fc.assert(
      fc.asyncProperty(policies, steps, async (policy, plan) => {
        const { object, leases, calls } = caller(policy);
        let now = T0;
        let passed = 0;
        for (const step of plan) {
          now += step.dtMs;
          const decisions = await calls(now, step.together);
          passed += decisions.filter((d) => d.allowed).length;
          // Every call passed was granted by the object, and the object's grants obey GCRA from a fresh start.
          expect(passed).toBeLessThanOrEqual(object.state.granted);
          expect(object.state.granted).toBeLessThanOrEqual(policy.burst + Math.floor(((now - T0) * 1000) / emissionIntervalUs(policy)));
          // A refused call means the object had nothing left at that moment and nothing is held here.
          for (const d of decisions.filter((d) => !d.allowed)) {
            expect(d.retryAfterSeconds).toBeGreaterThanOrEqual(1);
            expect(leases.held("k")).toBe(0);
          }
          expect(leases.held("k")).toBeLessThanOrEqual(LEASE_MAX * step.together);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("model: a caller calling once per LEASE_MS or less often sees exactly the object's decisions, one at a time", async () => {
    await fc.assert(
      fc.asyncProperty(policies, fc.array(fc.integer({ min: LEASE_MS, max: 20_000 }), { minLength: 1, maxLength: 40 }), async (policy, gaps) => {
        const object = objectOf(policy);
        const leases = new CallLeases();
        let now = T0;
        let tat: number | null = null;
        for (const gap of gaps) {
          now += gap;
          const alone = gcra(tat, now, policy);
          if (alone.allowed) tat = alone.tat;
          const d = await leases.spend("k", () => object, now, policy);
          expect(d).toEqual({ ...alone, granted: alone.allowed ? 1 : 0 });
        }
      }),
      { numRuns: 200 },
    );
  });

  it("model: Retry-After is honest: after a refusal, one call at that many seconds later passes", async () => {
    await fc.assert(
      fc.asyncProperty(policies, steps, async (policy, plan) => {
        const { object, leases, calls } = caller(policy);
        let now = T0;
        for (const step of plan) {
          now += step.dtMs;
          await calls(now, step.together);
        }
        let refused = await leases.spend("k", () => object, now, policy);
        while (refused.allowed) refused = await leases.spend("k", () => object, now, policy);
        expect((await leases.spend("k", () => object, now + refused.retryAfterSeconds * 1000, policy)).allowed).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
