import { describe, expect, it } from "vitest";
import { emissionIntervalUs, gcra, gcraGrant, passed, type RatePolicy, rateLimitHeaders, recoverySeconds } from "../../src/http/gcra";

// SPEC.md Limits, "Call rate": per caller; exceeding gives 429 RATE_LIMIT_EXCEEDED with a
// Retry-After that is exactly when the next call will pass (issue 3).

const T0 = Date.UTC(2030, 0, 1);

type Step = [atMs: number, allowed: boolean, remaining: number, retryAfter: number, reset: number];

/** Runs calls in order against one caller's state; each row is what that call must decide. */
function run(policy: RatePolicy, steps: Step[]) {
  let tat: number | null = null;
  for (const [at, allowed, remaining, retryAfter, reset] of steps) {
    const d = gcra(tat, T0 + at, policy);
    expect({ at, allowed: d.allowed, remaining: d.remaining, retryAfter: d.retryAfterSeconds, reset: d.resetSeconds }).toEqual({
      at,
      allowed,
      remaining,
      retryAfter,
      reset,
    });
    tat = d.tat;
  }
}

describe("gcra", () => {
  it.each<[string, RatePolicy, Step[]]>([
    [
      "60/min, burst 3: three at once, the fourth waits exactly one interval",
      { perMinute: 60, burst: 3 },
      [
        [0, true, 2, 0, 1],
        [0, true, 1, 0, 2],
        [0, true, 0, 0, 3],
        [0, false, 0, 1, 3],
        [999, false, 0, 1, 3],
        [1000, true, 0, 0, 3],
      ],
    ],
    [
      "60/min, burst 3: idle time refills the burst, never beyond it",
      { perMinute: 60, burst: 3 },
      [
        [0, true, 2, 0, 1],
        [0, true, 1, 0, 2],
        [0, true, 0, 0, 3],
        [3000, true, 2, 0, 1],
        [60_000, true, 2, 0, 1],
      ],
    ],
    [
      "7/min, burst 1: Retry-After rounds the 8.571 s interval up to 9",
      { perMinute: 7, burst: 1 },
      [
        [0, true, 0, 0, 9],
        [1, false, 0, 9, 9],
        [8000, false, 0, 1, 1],
        [8571, false, 0, 1, 1],
        [8572, true, 0, 0, 9],
      ],
    ],
    [
      "120/min, burst 30 (the defaults): 30 pass, the 31st waits 1 s",
      { perMinute: 120, burst: 30 },
      [
        ...Array.from({ length: 30 }, (_, i): Step => [0, true, 29 - i, 0, Math.ceil((i + 1) / 2)]),
        [0, false, 0, 1, 15],
        [499, false, 0, 1, 15],
        [500, true, 0, 0, 15],
      ],
    ],
  ])("%s", (_name, policy, steps) => run(policy, steps));

  it("a refused call leaves the state as it was", () => {
    const policy = { perMinute: 60, burst: 1 };
    const first = gcra(null, T0, policy);
    expect(gcra(first.tat, T0 + 10, policy)).toMatchObject({ allowed: false, tat: first.tat });
  });

  it("Retry-After is exact: refused one second before it, allowed at it", () => {
    for (const perMinute of [1, 7, 13, 59, 61, 120, 997]) {
      const policy = { perMinute, burst: 2 };
      let tat: number | null = null;
      for (let i = 0; i < 2; i++) tat = gcra(tat, T0, policy).tat;
      const refused = gcra(tat, T0, policy);
      expect(refused.allowed).toBe(false);
      const wait = refused.retryAfterSeconds * 1000;
      expect(gcra(tat, T0 + wait, policy).allowed, `perMinute ${perMinute}`).toBe(true);
      expect(gcra(tat, T0 + wait - 1000, policy).allowed, `perMinute ${perMinute}`).toBe(false);
    }
  });

  it.each([
    [{ perMinute: 120, burst: 30 }, 500_000, 15],
    [{ perMinute: 7, burst: 1 }, 8_571_428, 9],
    [{ perMinute: 60, burst: 10 }, 1_000_000, 10],
  ])("interval and recovery for %o", (policy, intervalUs, recovery) => {
    expect(emissionIntervalUs(policy)).toBe(intervalUs);
    expect(recoverySeconds(policy)).toBe(recovery);
  });

  it("formats the IETF draft RateLimit-Policy and RateLimit fields", () => {
    const policy = { perMinute: 120, burst: 30 };
    expect(rateLimitHeaders(gcra(null, T0, policy), policy)).toEqual({
      "RateLimit-Policy": '"api";q=30;w=15',
      RateLimit: '"api";r=29;t=1',
    });
  });

  describe("gcraGrant: one call decided, up to count - 1 more granted with it", () => {
    const policy = { perMinute: 60, burst: 5 };
    it.each<[string, number | null, number, number, { allowed: boolean; granted: number; remaining: number }]>([
      ["a fresh caller asking 3 gets 3; the decision is the first call's", null, 0, 3, { allowed: true, granted: 3, remaining: 4 }],
      ["asking 1 is gcra itself", null, 0, 1, { allowed: true, granted: 1, remaining: 4 }],
      ["never more than would still pass now", null, 0, 9, { allowed: true, granted: 5, remaining: 4 }],
      ["two calls left: asking 4 gets 2", T0 * 1000 + 3_000_000, 0, 4, { allowed: true, granted: 2, remaining: 1 }],
      ["none left: refused, nothing granted", T0 * 1000 + 5_000_000, 0, 4, { allowed: false, granted: 0, remaining: 0 }],
    ])("%s", (_name, tat, at, count, expected) => {
      const grant = gcraGrant(tat, T0 + at, policy, count);
      expect({ allowed: grant.allowed, granted: grant.granted, remaining: grant.remaining }).toEqual(expected);
      const single = gcra(tat, T0 + at, policy);
      // The TAT moves one interval per call granted, from where a single call would leave it.
      expect(grant.tat).toBe(grant.allowed ? single.tat + (grant.granted - 1) * emissionIntervalUs(policy) : single.tat);
    });

    it("a grant of n leaves the state n single calls would have left", () => {
      let tat: number | null = null;
      for (let i = 0; i < 4; i++) tat = gcra(tat, T0, policy).tat;
      expect(gcraGrant(null, T0, policy, 4).tat).toBe(tat);
    });
  });

  it("passed: a TAT left behind by time reports the whole burst, never more", () => {
    const policy = { perMinute: 60, burst: 5 };
    expect(passed(T0 * 1000 - 60_000_000, T0, policy)).toMatchObject({ allowed: true, remaining: 5, resetSeconds: 0 });
    expect(passed(gcra(null, T0, policy).tat, T0, policy)).toEqual(gcra(null, T0, policy));
  });
});
