/**
 * The call-rate rule (docs/api.md, export rule 4: the call rate, per caller), as GCRA: the generic cell rate
 * algorithm. A caller's whole state is one number, the theoretical arrival time (TAT); a call
 * passes when the TAT is at most `burst - 1` emission intervals ahead of now. Pure: time is an
 * argument. Arithmetic is in integer microseconds so boundaries are exact (a float interval such
 * as 60000/7 ms would drift); Unix microseconds stay below 2^53 until the year 2255.
 */

/** `perMinute` calls a minute sustained, up to `burst` calls at once. */
export interface RatePolicy {
  perMinute: number;
  burst: number;
}

export interface GcraDecision {
  allowed: boolean;
  /** The TAT to keep (Unix microseconds); the stored one, unchanged, when the call is refused. */
  tat: number;
  /** Calls that would still pass at this instant. */
  remaining: number;
  /** Whole seconds until the next call passes: 0 when allowed, else at least 1, rounded up. */
  retryAfterSeconds: number;
  /** Whole seconds until the full burst is available again, rounded up. */
  resetSeconds: number;
}

const US_PER_SECOND = 1_000_000;
const US_PER_MINUTE = 60 * US_PER_SECOND;

/** Microseconds between two calls at the sustained rate. */
export function emissionIntervalUs(policy: RatePolicy): number {
  return Math.floor(US_PER_MINUTE / policy.perMinute);
}

const ceilSeconds = (us: number) => Math.max(0, Math.ceil(us / US_PER_SECOND));

/**
 * Decides one call at `nowMs` (Unix milliseconds) for a caller whose stored TAT is `storedTat`
 * (null for a caller never seen, or whose state was dropped once it had fully recovered).
 */
export function gcra(storedTat: number | null, nowMs: number, policy: RatePolicy): GcraDecision {
  const now = Math.round(nowMs * 1000);
  const interval = emissionIntervalUs(policy);
  const tolerance = interval * (policy.burst - 1);
  const tat = Math.max(storedTat ?? now, now);
  if (tat - now > tolerance) {
    return {
      allowed: false,
      tat: storedTat ?? now,
      remaining: 0,
      // The first instant at which `tat - now <= tolerance` holds.
      retryAfterSeconds: ceilSeconds(tat - tolerance - now),
      resetSeconds: ceilSeconds(tat - now),
    };
  }
  return passed(tat + interval, nowMs, policy);
}

/**
 * The decision of a call that passed and left the caller's TAT at `tat` (Unix microseconds):
 * the calls still passing at `nowMs` and the seconds until the whole burst is back.
 */
export function passed(tat: number, nowMs: number, policy: RatePolicy): GcraDecision {
  const now = Math.round(nowMs * 1000);
  const interval = emissionIntervalUs(policy);
  const headroom = interval * (policy.burst - 1) - (tat - now);
  return {
    allowed: true,
    tat,
    remaining: headroom < 0 ? 0 : Math.min(policy.burst, Math.floor(headroom / interval) + 1),
    retryAfterSeconds: 0,
    resetSeconds: ceilSeconds(tat - now),
  };
}

/** The stored TAT once `refund` calls granted earlier (gcraGrant) and never spent are handed back. */
export function refunded(storedTat: number | null, refund: number, policy: RatePolicy): number | null {
  return storedTat === null || refund <= 0 ? storedTat : storedTat - refund * emissionIntervalUs(policy);
}

/** A decision for one call, and how many calls were granted with it (0 refused, else 1 to `count`). */
export interface GcraGrant extends GcraDecision {
  granted: number;
}

/**
 * Decides one call as `gcra` does and, when it passes, grants up to `count - 1` more at once, as
 * many as would still pass now: the TAT advances by every call granted. The decision (remaining,
 * reset) is the first call's; the calls granted beyond it are spent later by whoever holds them.
 */
export function gcraGrant(storedTat: number | null, nowMs: number, policy: RatePolicy, count: number): GcraGrant {
  const first = gcra(storedTat, nowMs, policy);
  if (!first.allowed) return { ...first, granted: 0 };
  const extra = Math.max(0, Math.min(Math.floor(count) - 1, first.remaining));
  return { ...first, tat: first.tat + extra * emissionIntervalUs(policy), granted: 1 + extra };
}

/** Seconds for a caller who has spent the whole burst to have all of it back. */
export function recoverySeconds(policy: RatePolicy): number {
  return ceilSeconds(emissionIntervalUs(policy) * policy.burst);
}

/**
 * The IETF draft fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy` states the
 * quota as the burst, recovered in full over `w` seconds; `RateLimit` gives what is left now and
 * the seconds until the quota is full again.
 */
export function rateLimitHeaders(decision: GcraDecision, policy: RatePolicy): Record<string, string> {
  return {
    "RateLimit-Policy": `"api";q=${policy.burst};w=${recoverySeconds(policy)}`,
    RateLimit: `"api";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
