import { DurableObject } from "cloudflare:workers";

/**
 * Live log streams per account: at most LOG_STREAMS_PER_ACCOUNT open at once, counted across every
 * isolate by one Durable Object per account. Each open stream holds a lease that its request
 * renews every LEASE_RENEW_MS while it streams and gives back when it ends; a lease whose isolate
 * died (nobody renews it) lapses LEASE_TTL_MS after its last renewal, so a lost viewer never holds
 * a slot for long. The decision is a pure function (`leaseDecision`, table test in
 * test/unit/log-stream-leases.test.ts).
 */

/** A lease lapses this long after it was taken or last renewed. */
export const LEASE_TTL_MS = 60_000;
/** A streaming request renews its lease this often (well within LEASE_TTL_MS). */
export const LEASE_RENEW_MS = 20_000;

/** Lease id -> when it lapses (Unix ms). */
export type Leases = Record<string, number>;

export type LeaseDecision = { allowed: true; leases: Leases } | { allowed: false; leases: Leases; retryAfterSeconds: number };

/**
 * Whether one more stream may open at `now` under `limit`: lapsed leases are dropped first; over
 * the limit, the wait is until the soonest lease lapses (at least 1 s).
 */
export function leaseDecision(leases: Leases, now: number, limit: number): LeaseDecision {
  const live: Leases = {};
  for (const [id, until] of Object.entries(leases)) if (until > now) live[id] = until;
  const held = Object.values(live);
  if (held.length < limit) return { allowed: true, leases: live };
  return { allowed: false, leases: live, retryAfterSeconds: Math.max(1, Math.ceil((Math.min(...held) - now) / 1000)) };
}

/** One per account (named by the account id): the leases of its open live log streams. */
export class LogStreamLeases extends DurableObject<Env> {
  #leases(): Leases {
    return this.ctx.storage.kv.get<Leases>("leases") ?? {};
  }

  #save(leases: Leases): void {
    if (Object.keys(leases).length === 0) this.ctx.storage.kv.delete("leases");
    else this.ctx.storage.kv.put("leases", leases);
  }

  /** Takes a lease for a stream about to open, unless the account already holds `limit` live ones. */
  async acquire(input: { leaseId: string; now: number; limit: number }): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }> {
    const decision = leaseDecision(this.#leases(), input.now, input.limit);
    if (!decision.allowed) {
      this.#save(decision.leases);
      return { allowed: false, retryAfterSeconds: decision.retryAfterSeconds };
    }
    this.#save({ ...decision.leases, [input.leaseId]: input.now + LEASE_TTL_MS });
    return { allowed: true };
  }

  /** The stream is still open: its lease runs LEASE_TTL_MS from `now` (a lapsed one is not revived). */
  async renew(input: { leaseId: string; now: number }): Promise<boolean> {
    const leases = this.#leases();
    const until = leases[input.leaseId];
    if (until === undefined || until <= input.now) return false;
    this.#save({ ...leases, [input.leaseId]: input.now + LEASE_TTL_MS });
    return true;
  }

  /** The stream ended: its slot is free at once. */
  async release(input: { leaseId: string }): Promise<void> {
    const leases = this.#leases();
    if (!(input.leaseId in leases)) return;
    delete leases[input.leaseId];
    this.#save(leases);
  }
}

/** The log stream leases of an account. */
export function logStreamLeases(env: Env, accountId: string): DurableObjectStub<LogStreamLeases> {
  return env.LOG_STREAMS.get(env.LOG_STREAMS.idFromName(accountId));
}
