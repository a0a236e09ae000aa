import { emissionIntervalUs, type GcraDecision, type GcraGrant, passed, type RatePolicy } from "./gcra";

/**
 * Calls granted ahead to this isolate. Asking a caller's RateLimiter object for every call costs a
 * Durable Object round trip per request; a caller whose calls come fast is granted a few at once
 * instead (gcraGrant), which this isolate then spends without asking. Every call spent was granted
 * by the caller's one object, so the limit holds across isolates; the object alone refuses.
 *
 * - A grant asks for 1 call when the caller's last grant here is over LEASE_MS old, else twice the
 *   last size, up to leaseCeiling: a caller calling now and then is asked about one call at a time.
 * - Calls not spent within LEASE_MS are handed back (a refund) with the caller's next grant.
 * - A call spent here reports the caller's TAT as if the unspent calls were not taken, so its
 *   `RateLimit` fields read as they would had each call gone to the object.
 */

/** How long (by the Worker's clock, in ms) calls granted ahead may be spent here. */
export const LEASE_MS = 1000;
const LEASES_KEPT = 1000;
/** How many grants asked for by other requests one request waits on before asking itself. */
const WAITS = 3;

/** No grant is larger than this, and no isolate holds more of one caller's calls. */
export const LEASE_MAX = 16;

/** The most calls one grant takes: an eighth of the burst (at least 1), never more than LEASE_MAX. */
export function leaseCeiling(policy: RatePolicy): number {
  return Math.max(1, Math.min(LEASE_MAX, Math.floor(policy.burst / 8)));
}

/** The caller's RateLimiter object, as this module uses it. */
export interface CallGranter {
  take(input: { now: number; policy: RatePolicy; count: number; refund: number }): Promise<GcraGrant>;
}

interface Lease {
  policy: RatePolicy;
  /** Calls granted and not yet spent. */
  tokens: number;
  /** The object's TAT after the grants (Unix µs). */
  tat: number;
  /** Until when (ms) `tokens` may be spent here. */
  until: number;
  /** The size the last grant asked for, and when it was asked. */
  size: number;
  grantedAt: number;
}

const samePolicy = (a: RatePolicy, b: RatePolicy) => a.perMinute === b.perMinute && a.burst === b.burst;

export class CallLeases {
  readonly #leases = new Map<string, Lease>();
  /** The grant being asked for, per caller. */
  readonly #asking = new Map<string, Promise<GcraGrant>>();

  /** Spends one of `key`'s calls at `now`: from a grant held here, else through the object. */
  async spend(key: string, granter: () => CallGranter, now: number, policy: RatePolicy): Promise<GcraDecision> {
    // While a grant for this caller is on its way, wait for it rather than ask again (a few times
    // at most: each grant holds at most leaseCeiling calls for the requests waiting on it).
    for (let round = 0; ; round++) {
      const local = this.#spendHeld(key, now, policy);
      if (local) return local;
      const asking = this.#asking.get(key);
      if (!asking || round === WAITS) break;
      await asking.catch(() => undefined);
    }
    const held = this.#leases.get(key);
    const same = held !== undefined && samePolicy(held.policy, policy);
    const size = same && now - held.grantedAt < LEASE_MS ? Math.min(leaseCeiling(policy), held.size * 2) : 1;
    // Calls held past their time go back with this request (under another policy, they lapse).
    const refund = same ? held.tokens : 0;
    if (held) held.tokens = 0;
    const asking = granter().take({ now, policy, count: size, refund });
    this.#asking.set(key, asking);
    let grant: GcraGrant;
    try {
      grant = await asking;
    } finally {
      if (this.#asking.get(key) === asking) this.#asking.delete(key);
    }
    if (grant.allowed) {
      this.#keep(key, grant, size, now, policy);
      return grant;
    }
    // Refused: a grant that reached this isolate meanwhile may still hold a call for this one.
    return this.#spendHeld(key, now, policy) ?? grant;
  }

  #spendHeld(key: string, now: number, policy: RatePolicy): GcraDecision | null {
    const lease = this.#leases.get(key);
    if (!lease || lease.tokens === 0 || now >= lease.until || !samePolicy(lease.policy, policy)) return null;
    lease.tokens--;
    return passed(lease.tat - lease.tokens * emissionIntervalUs(policy), now, policy);
  }

  #keep(key: string, grant: GcraGrant, size: number, now: number, policy: RatePolicy): void {
    const extra = grant.granted - 1;
    const lease = this.#leases.get(key);
    if (lease && samePolicy(lease.policy, policy) && now < lease.until) {
      // Two grants that overlapped: both are held, under the later TAT.
      lease.tokens += extra;
      lease.tat = Math.max(lease.tat, grant.tat);
      Object.assign(lease, { until: now + LEASE_MS, size, grantedAt: now });
      return;
    }
    this.#leases.delete(key);
    if (this.#leases.size >= LEASES_KEPT) this.#leases.delete(this.#leases.keys().next().value!);
    this.#leases.set(key, { policy, tokens: extra, tat: grant.tat, until: now + LEASE_MS, size, grantedAt: now });
  }

  /** Calls held for `key` (for tests). */
  held(key: string): number {
    return this.#leases.get(key)?.tokens ?? 0;
  }
}
