import { DurableObject } from "cloudflare:workers";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import { addressBucket } from "./client-address";
import { ApiError } from "./errors";
import { type GcraDecision, type GcraGrant, gcra, gcraGrant, refunded, type RatePolicy, rateLimitHeaders, recoverySeconds } from "./gcra";
import { CallLeases, LEASE_MAX } from "./rate-lease";
import { setReplyHeaders } from "./reply-headers";

const TAT_KEY = "tat";
/** When (Unix ms, real time) the state may be dropped: a whole recovery after the last spend. */
const DROP_KEY = "drop_at";
/** An isolate never holds back more than a grant's largest size, so no refund is larger. */
const MAX_REFUND = LEASE_MAX;

/**
 * One per caller (named by the caller key): the GCRA state of the API's call-rate limit.
 * Calls to one object run one at a time and `take` does no I/O besides its own storage, so the
 * read-decide-write below cannot interleave with another call.
 */
export class RateLimiter extends DurableObject<Env> {
  /** Whether this instance has an alarm pending (a fresh instance sets one at its first spend). */
  #alarmPending = false;

  /**
   * Spends one call of this caller's allowance at `now` (Unix ms, from the Worker's injectable
   * clock, so tests move it) under `policy`, and grants up to `count - 1` more to be spent by the
   * asking isolate (rate-lease.ts); first takes back `refund` calls granted earlier and never
   * spent. A refused call spends nothing.
   */
  async take(input: { now: number; policy: RatePolicy; count?: number; refund?: number }): Promise<GcraGrant> {
    const before = this.ctx.storage.kv.get<number>(TAT_KEY) ?? null;
    const stored = refunded(before, Math.min(Math.max(0, Math.floor(input.refund ?? 0)), MAX_REFUND), input.policy);
    if (stored !== before) this.ctx.storage.kv.put(TAT_KEY, stored);
    const decision = gcraGrant(stored, input.now, input.policy, input.count ?? 1);
    if (decision.allowed) {
      this.ctx.storage.kv.put(TAT_KEY, decision.tat);
      // Once a caller has been quiet long enough to have its whole burst back, its state says
      // nothing a fresh object would not; dropping it keeps one-off callers (client addresses)
      // from leaving storage behind forever. One alarm at a time: when it fires early (the caller
      // spent since) it moves itself to the recorded moment instead of dropping anything.
      const dropAt = Date.now() + recoverySeconds(input.policy) * 1000;
      this.ctx.storage.kv.put(DROP_KEY, dropAt);
      if (!this.#alarmPending) {
        await this.ctx.storage.setAlarm(dropAt);
        this.#alarmPending = true;
      }
    }
    return decision;
  }

  /** Gives back `count` calls spent earlier (by a sign-in that then succeeded). */
  async giveBack(input: { policy: RatePolicy; count: number }): Promise<void> {
    const before = this.ctx.storage.kv.get<number>(TAT_KEY) ?? null;
    const stored = refunded(before, Math.min(Math.max(0, Math.floor(input.count)), MAX_REFUND), input.policy);
    if (stored !== before) this.ctx.storage.kv.put(TAT_KEY, stored);
  }

  /** Whether a call would pass at `now` under `policy`, spending nothing. */
  async peek(input: { now: number; policy: RatePolicy }): Promise<GcraDecision> {
    return gcra(this.ctx.storage.kv.get<number>(TAT_KEY) ?? null, input.now, input.policy);
  }

  override async alarm(): Promise<void> {
    const dropAt = this.ctx.storage.kv.get<number>(DROP_KEY) ?? 0;
    if (Date.now() < dropAt) {
      await this.ctx.storage.setAlarm(dropAt);
      this.#alarmPending = true;
      return;
    }
    this.#alarmPending = false;
    await this.ctx.storage.deleteAll();
  }
}

/**
 * Object ids by caller key: deriving one hashes the name, and a caller's requests come again and
 * again. An id is a plain value, valid in any request; the map is cleared when it grows past its bound.
 */
const limiterIds = new Map<string, DurableObjectId>();
const LIMITER_IDS_KEPT = 1000;

/** The limiter object's id for a caller key (or any other limiter name). */
export function limiterId(namespace: Env["RATE_LIMITER"], key: string): DurableObjectId {
  let id = limiterIds.get(key);
  if (!id) {
    id = namespace.idFromName(key);
    if (limiterIds.size >= LIMITER_IDS_KEPT) limiterIds.clear();
    limiterIds.set(key, id);
  }
  return id;
}

/** The calls this isolate holds, granted ahead by callers' objects (rate-lease.ts). */
export const callLeases = new CallLeases();

/** Names the caller a request is counted against, e.g. `account:<id>` or `ip:<address>`. */
export type CallerKey = (c: Context<AppEnv>) => string | Promise<string>;

/** The caller is the account; use after `bearerAuth()`, which sets it. */
export const accountCaller: CallerKey = (c) => {
  const accountId = c.get("accountId");
  if (!accountId) throw new Error("accountCaller used before the account is known");
  return accountKey(accountId);
};

/** The caller is the client address Cloudflare saw (`CF-Connecting-IP`); an IPv6 client by its /64. */
export const addressCaller: CallerKey = (c) => `ip:${addressBucket(c.req.header("CF-Connecting-IP") ?? "unknown")}`;

/** The key for an account, for callers that learn the account some other way (a signed link). */
export const accountKey = (accountId: string) => `account:${accountId}`;

/**
 * The per-caller call-rate limit (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_BURST): over it, 429
 * RATE_LIMIT_EXCEEDED with an integer `Retry-After` that is exactly when the next call passes.
 * Every reply that passed through it, error or not, carries `RateLimit-Policy` and `RateLimit`.
 */
export function rateLimit(callerKey: CallerKey): MiddlewareHandler<AppEnv> {
  return async function rateLimit(c, next) {
    const config = c.get("config");
    const policy = { perMinute: config.RATE_LIMIT_PER_MINUTE, burst: config.RATE_LIMIT_BURST };
    const key = await callerKey(c);
    const limiter = () => c.env.RATE_LIMITER.get(limiterId(c.env.RATE_LIMITER, key));
    const decision = await callLeases.spend(key, limiter, c.get("deps").now(), policy);
    const headers = rateLimitHeaders(decision, policy);
    if (!decision.allowed) {
      const wait = decision.retryAfterSeconds;
      throw new ApiError(
        "RATE_LIMIT_EXCEEDED",
        `Too many calls. Wait ${wait} second${wait === 1 ? "" : "s"} before calling again.`,
        { headers: { ...headers, "Retry-After": String(wait) } },
      );
    }
    await next();
    // Errors thrown further in have already become c.res by now (Hono's compose), so this covers them too.
    setReplyHeaders(c, headers);
  };
}
