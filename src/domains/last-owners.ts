import { eq } from "drizzle-orm";
import { database } from "../db/client";
import { domainLastOwners } from "../db/schema";

/**
 * The account each custom hostname was last `Active` for: the `domain_last_owners` records (every
 * query of the table is here). A claim by any other account needs the TXT proof (claims.ts
 * `strangerToHostname`): a CNAME to an app's hostname is not enough, since the subdomain it names
 * may have passed to someone else since the owner set it up.
 */

/** The account the hostname was last `Active` for, or null when it never was. */
export async function lastOwnerOf(env: Env, hostname: string): Promise<string | null> {
  const row = await database(env).select({ accountId: domainLastOwners.accountId }).from(domainLastOwners).where(eq(domainLastOwners.hostname, hostname)).get();
  return row?.accountId ?? null;
}

/** The hostname became `Active` for `accountId`. */
export async function recordActiveOwner(env: Env, input: { hostname: string; accountId: string; now: number }): Promise<void> {
  await database(env)
    .insert(domainLastOwners)
    .values({ hostname: input.hostname, accountId: input.accountId, activeAt: input.now })
    .onConflictDoUpdate({ target: domainLastOwners.hostname, set: { accountId: input.accountId, activeAt: input.now } });
}
