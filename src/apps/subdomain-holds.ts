import { eq, lt } from "drizzle-orm";
import { database } from "../db/client";
import { subdomainHolds } from "../db/schema";
import { iso } from "../lib/time";

/**
 * No takeover through a freed name. A subdomain an account released (its app deleted, or the app
 * given another subdomain before its first deploy) is held for that account for
 * SUBDOMAIN_HOLD_DAYS: DNS records the owner forgot (a custom domain's CNAME to
 * `<subdomain>.<APPS_DOMAIN>`) still lead there, and whoever created an app with that subdomain
 * would receive their traffic. Until the hold ends, only the account that released it may use
 * the subdomain again. The `subdomain_holds` records: every query of the table is here.
 */

const DAY_MS = 86_400_000;

export interface Hold {
  accountId: string;
  heldUntil: number;
}

/** When a subdomain released at `now` is free for everyone. */
export const holdEndsAt = (now: number, holdDays: number) => now + holdDays * DAY_MS;

/** Whether `hold` keeps `accountId` from taking the subdomain at `now`: another account's, not yet ended. */
export function heldFromAccount(hold: Hold | undefined, accountId: string, now: number): boolean {
  return hold !== undefined && hold.accountId !== accountId && now < hold.heldUntil;
}

/** The refusal, naming when the subdomain is free. */
export function subdomainHeldMessage(heldUntil: number): string {
  return `This subdomain was released by its previous owner and is reserved for them until ${iso(heldUntil).slice(0, 10)}. Choose another.`;
}

/** Holds a released subdomain for its account (a longer hold replaces a shorter one); ended holds are cleared. */
export async function holdSubdomain(env: Env, input: { subdomain: string; accountId: string; now: number; holdDays: number }): Promise<void> {
  if (input.holdDays === 0) return;
  const db = database(env);
  const heldUntil = holdEndsAt(input.now, input.holdDays);
  await db.batch([
    db.delete(subdomainHolds).where(lt(subdomainHolds.heldUntil, input.now)),
    db
      .insert(subdomainHolds)
      .values({ subdomain: input.subdomain, accountId: input.accountId, heldUntil })
      .onConflictDoUpdate({ target: subdomainHolds.subdomain, set: { accountId: input.accountId, heldUntil } }),
  ]);
}

/** The hold on a subdomain, if any (ended or not). */
export async function holdOf(env: Env, subdomain: string): Promise<Hold | undefined> {
  return database(env).select({ accountId: subdomainHolds.accountId, heldUntil: subdomainHolds.heldUntil }).from(subdomainHolds).where(eq(subdomainHolds.subdomain, subdomain)).get();
}
