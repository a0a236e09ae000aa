import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { apps } from "./apps";

/** Custom domains and their claims, and the subdomains held for an account. */

/** docs/domains.md, rules 1-5 (src/domains/states.ts); shown as `Pending DNS`, `Verifying…`, `Active`, `Error`. */
export const CUSTOM_DOMAIN_STATUSES = ["pending_dns", "verifying", "active", "error"] as const;

/**
 * Custom domains claimed by apps (owner: src/domains/store.ts). Several apps may claim one
 * hostname while it waits (`Pending DNS`, `Error`); one app at most holds it `Verifying…` or
 * `Active` (the partial unique index), the first whose claim DNS verified. Each claim has its own
 * DomainChecker object (named by the row id) whose alarm runs the re-checks.
 */
export const customDomains = sqliteTable(
  "custom_domains",
  {
    id: text("id").primaryKey(),
    /** Lowercase, punycode, no trailing dot. */
    hostname: text("hostname").notNull(),
    appId: text("app_id")
      .notNull()
      .references(() => apps.id, { onDelete: "cascade" }),
    status: text("status", { enum: CUSTOM_DOMAIN_STATUSES }).notNull(),
    /** Why the domain is in `Error` (what was found and what was expected). */
    reason: text("reason"),
    /** The route is in place: the proxy serves the hostname from `Verifying…` on. */
    routeReady: integer("route_ready", { mode: "boolean" }).notNull().default(false),
    /** The hostname provider serves HTTPS for it (a certificate was obtained). */
    https: integer("https", { mode: "boolean" }).notNull().default(false),
    /** The hostname provider's id for it (Cloudflare custom hostname id), once created. */
    providerRef: text("provider_ref"),
    createdAt: integer("created_at").notNull(),
    lastCheckedAt: integer("last_checked_at"),
    nextCheckAt: integer("next_check_at"),
    /** The claim's token: the value of the TXT record at `_cp-challenge.<hostname>` that proves it. */
    token: text("token").notNull().default(""),
    /** Since when the claim has been waiting (`Pending DNS` or `Error`); null while served. Expiry counts from it. */
    waitingSince: integer("waiting_since"),
  },
  (t) => [
    uniqueIndex("custom_domains_app_hostname_idx").on(t.appId, t.hostname),
    uniqueIndex("custom_domains_held_idx")
      .on(t.hostname)
      .where(sql`${t.status} IN ('verifying', 'active')`),
    index("custom_domains_hostname_idx").on(t.hostname),
    index("custom_domains_app_idx").on(t.appId, t.createdAt),
  ],
);

/**
 * Claims removed because DNS never verified them within DOMAIN_CLAIM_DAYS (owner:
 * src/domains/store.ts): the app page shows a one-line note of each for 30 days.
 */
export const expiredDomainClaims = sqliteTable(
  "expired_domain_claims",
  {
    id: text("id").primaryKey(),
    appId: text("app_id")
      .notNull()
      .references(() => apps.id, { onDelete: "cascade" }),
    hostname: text("hostname").notNull(),
    expiredAt: integer("expired_at").notNull(),
  },
  (t) => [index("expired_domain_claims_app_idx").on(t.appId, t.expiredAt)],
);

/**
 * Subdomains an account released (its app deleted, or given another subdomain), held for that
 * account alone until `held_until` (SUBDOMAIN_HOLD_DAYS), so a stranger cannot pick up a name
 * whose DNS records still point at it (owner: src/apps/subdomain-holds.ts). No foreign key: a hold
 * outlives the account that made it.
 */
export const subdomainHolds = sqliteTable("subdomain_holds", {
  subdomain: text("subdomain").primaryKey(),
  accountId: text("account_id").notNull(),
  heldUntil: integer("held_until").notNull(),
});

/**
 * The account each custom hostname was last `Active` for (owner: src/domains/last-owners.ts): any
 * other account's claim of it needs the TXT proof, a CNAME to its app is not enough.
 */
export const domainLastOwners = sqliteTable("domain_last_owners", {
  hostname: text("hostname").primaryKey(),
  accountId: text("account_id").notNull(),
  activeAt: integer("active_at").notNull(),
});
