import type { Context, MiddlewareHandler } from "hono";
import { sha256Hex } from "../lib/encoding";
import { addressBucket } from "./client-address";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";
import type { RatePolicy } from "./gcra";
import { limiterId } from "./rate-limiter";

/**
 * Limits in front of authentication, so guessing costs a guesser more than it costs us: each is
 * checked before any password hash, and before a token lookup's answer is used (the API's lookup
 * runs alongside the check, lookUpTokenAhead), per client address (an IPv6 client by its /64) and,
 * for sign-in, per account. A sign-in spends before it hashes, in one step per key
 * (spendFirst), and gets its spend back when it succeeds; elsewhere only failures spend (a
 * sign-up spends every time): a script with a good token is never slowed by them.
 */

/** Failed authentications per client address: 10 at once, then one every 6 seconds. */
export const ADDRESS_FAILURES: RatePolicy = { perMinute: 10, burst: 10 };
/**
 * Wrong passwords per account: 10 at once, then one every 10 seconds. The owner is never locked
 * out for longer than that once the guessing stops.
 */
export const ACCOUNT_FAILURES: RatePolicy = { perMinute: 6, burst: 10 };
/**
 * Sign-ups per client address (each one costs a password hash): 100 at once, then one every 2
 * seconds. Generous, because one office or one test run signs up from one address.
 */
export const ADDRESS_SIGNUPS: RatePolicy = { perMinute: 30, burst: 100 };

/**
 * The client address as the limits count it: `CF-Connecting-IP` on Cloudflare and under wrangler
 * dev (an IPv6 address by its /64, client-address.ts), else one shared bucket.
 */
export function clientAddress(c: Context): string {
  return addressBucket(c.req.header("CF-Connecting-IP") ?? "unknown");
}

function limiter(c: Context<AppEnv>, key: string) {
  return c.env.RATE_LIMITER.get(limiterId(c.env.RATE_LIMITER, key));
}

/** 429 RATE_LIMIT_EXCEEDED unless every one of `keys` has allowance left under its policy. */
export async function checkAllowance(c: Context<AppEnv>, keys: [string, RatePolicy][]): Promise<void> {
  const now = c.get("deps").now();
  const decisions = await Promise.all(keys.map(([key, policy]) => limiter(c, key).peek({ now, policy })));
  const wait = Math.max(0, ...decisions.filter((d) => !d.allowed).map((d) => d.retryAfterSeconds));
  if (decisions.every((d) => d.allowed)) return;
  throw tooMany(wait);
}

function tooMany(wait: number): ApiError {
  return new ApiError("RATE_LIMIT_EXCEEDED", `Too many attempts. Wait ${wait} second${wait === 1 ? "" : "s"} before trying again.`, {
    headers: { "Retry-After": String(wait) },
  });
}

/**
 * Spends one unit of every key's allowance before the work it guards, each key in one atomic
 * step of its limiter object, so parallel attempts cannot all pass a check made before any of
 * them spent. When one key refuses, the others get their unit back and the answer is 429.
 */
export async function spendFirst(c: Context<AppEnv>, keys: [string, RatePolicy][]): Promise<void> {
  const now = c.get("deps").now();
  const decisions = await Promise.all(keys.map(([key, policy]) => limiter(c, key).take({ now, policy })));
  if (decisions.every((d) => d.allowed)) return;
  await giveBack(c, keys.filter((_, i) => decisions[i]!.allowed));
  throw tooMany(Math.max(1, ...decisions.filter((d) => !d.allowed).map((d) => d.retryAfterSeconds)));
}

/** Gives back the unit spendFirst took from each key (the attempt succeeded). */
export async function giveBack(c: Context<AppEnv>, keys: [string, RatePolicy][]): Promise<void> {
  await Promise.all(keys.map(([key, policy]) => limiter(c, key).giveBack({ policy, count: 1 })));
}

/** Spends one unit of each key's allowance (a failed attempt, or a sign-up). */
export async function spendAllowance(c: Context<AppEnv>, keys: [string, RatePolicy][]): Promise<void> {
  const now = c.get("deps").now();
  await Promise.all(keys.map(([key, policy]) => limiter(c, key).take({ now, policy })));
}

/** The limiter keys of a sign-in attempt: the address and the account named by the email. */
export async function signInKeys(c: Context<AppEnv>, email: string): Promise<[string, RatePolicy][]> {
  return [
    [`auth-ip:${clientAddress(c)}`, ADDRESS_FAILURES],
    // Hashed, so no email address becomes an object name.
    [`login:${await sha256Hex(email)}`, ACCOUNT_FAILURES],
  ];
}

/**
 * For the API's token check: refuses an address that failed too often before the token is looked
 * up, and counts a 401 from further in as a failure of that address.
 */
export function tokenFailureLimit(): MiddlewareHandler<AppEnv> {
  return async function tokenFailureLimit(c, next) {
    const keys: [string, RatePolicy][] = [[`auth-ip:${clientAddress(c)}`, ADDRESS_FAILURES]];
    await checkAllowance(c, keys);
    await next();
    if (c.res.status === 401) await spendAllowance(c, keys);
  };
}
