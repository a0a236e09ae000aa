import { DurableObject } from "cloudflare:workers";
import { type Config, getConfig } from "../config";
import { getApp } from "../apps/store";
import { describeError, log } from "../http/log";
import { claimExpired, claimExpiresAt, isLost, needsTxt, proveClaim, strangerToHostname, verificationRecord } from "./claims";
import { lookupRecords, lookupTxt } from "./dns";
import { lastOwnerOf, recordActiveOwner } from "./last-owners";
import { type ServiceTargets, pointsToService } from "./pointing";
import type { HostnameProvider } from "./hostname-provider";
import { hostnameProvider } from "./provider";
import { type DnsOutcome, type NextCheck, type Transition, type CheckTrigger, afterDnsCheck, afterVerifyStep } from "./states";
import { type DomainRow, expireClaim, getDomainById, markLost, takeHostname, updateDomain } from "./store";
import { notifyDomain } from "../notifications/hooks";

/** While `Verifying…` the provider is asked again this soon (docs/domains.md, rule 3: route "within a few seconds"). */
export const VERIFY_POLL_MS = 3000;

interface Tracked {
  domainId: string;
  hostname: string;
  providerRef: string | null;
}

/** One check of a claim: what it starts from. */
interface Check {
  tracked: Tracked;
  row: DomainRow;
  app: NonNullable<Awaited<ReturnType<typeof getApp>>>;
  config: Config;
  now: number;
  trigger: CheckTrigger;
}

/** What a check found: the claim's next state, the provider's id for it, and the row as the write expects to find it. */
interface Found {
  transition: Transition & { https?: boolean };
  ref: string | null;
  asRead: Pick<DomainRow, "status" | "nextCheckAt">;
}

/** What a domain must point to, from the settings and the app's hostname. */
export function serviceTargets(env: Env, subdomain: string): ServiceTargets {
  const config = getConfig(env);
  return { appHostname: `${subdomain}.${config.APPS_DOMAIN}`, target: config.CUSTOM_DOMAIN_TARGET, addresses: config.CUSTOM_DOMAIN_ADDRESSES };
}

/**
 * One per custom domain (named by the domain's id): its timer. The alarm runs the automatic
 * re-check every DOMAIN_RECHECK_SECONDS while the domain waits (`Pending DNS`, `Error`), the
 * provider steps while it is `Verifying…`, the re-check every DOMAIN_ACTIVE_RECHECK_SECONDS while
 * it is `Active`, and removes a claim still waiting DOMAIN_CLAIM_DAYS after it started (a claim
 * another app won is not re-checked: its alarm is its expiry). Alarms survive restarts; removal
 * deletes the alarm.
 * Calls are run one at a time (the alarm, `Verify now`, removal), so a check never overlaps
 * another or outlives a removal.
 */
export class DomainChecker extends DurableObject<Env> {
  #queue: Promise<unknown> = Promise.resolve();

  #serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(run, run);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  #tracked(): Tracked | undefined {
    return this.ctx.storage.kv.get<Tracked>("domain");
  }

  /** Starts the timer of a domain just added: its first re-check at its `next_check_at`. */
  track(input: { domainId: string; hostname: string; firstCheckAt: number }): Promise<void> {
    return this.#serial(async () => {
      this.ctx.storage.kv.put<Tracked>("domain", { domainId: input.domainId, hostname: input.hostname, providerRef: null });
      await this.ctx.storage.setAlarm(input.firstCheckAt);
    });
  }

  /** `Verify now`: the check runs at once; the timer starts over from it. */
  verifyNow(): Promise<void> {
    return this.#serial(() => this.#step("verify_now"));
  }

  /** The scheduled sweep found its check overdue: with no alarm set, the check runs at once. */
  wake(): Promise<void> {
    return this.#serial(async () => {
      if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now());
    });
  }

  /** The domain was removed (its row is gone): the alarm is cancelled and the provider told. */
  remove(): Promise<void> {
    return this.#serial(() => this.#forget());
  }

  override async alarm(): Promise<void> {
    await this.#serial(async () => {
      try {
        await this.#step("recheck");
      } catch (err) {
        // Unexpected (D1 unavailable, say): log it and keep the cadence instead of stopping.
        log("error", "custom domain check failed", { domain_id: this.#tracked()?.domainId, ...describeError(err) });
        await this.ctx.storage.setAlarm(Date.now() + getConfig(this.env).DOMAIN_RECHECK_SECONDS * 1000);
      }
    });
  }

  async #forget(): Promise<void> {
    const tracked = this.#tracked();
    await this.ctx.storage.deleteAlarm();
    if (tracked?.providerRef) {
      await hostnameProvider(getConfig(this.env), this.env)
        .remove(tracked.hostname, tracked.providerRef)
        .catch((err: unknown) => log("warn", "custom hostname not removed at the provider", { domain_id: tracked.domainId, ...describeError(err) }));
    }
    await this.ctx.storage.deleteAll();
  }

  async #step(trigger: CheckTrigger): Promise<void> {
    const tracked = this.#tracked();
    const row = tracked && (await getDomainById(this.env, tracked.domainId));
    const app = row && (await getApp(this.env, row.appId));
    if (!tracked || !row || !app) return this.#forget();

    const config = getConfig(this.env);
    const now = Date.now();
    if (claimExpired(row, now, config.DOMAIN_CLAIM_DAYS)) {
      await expireClaim(this.env, row, crypto.randomUUID(), now);
      log("info", "custom domain claim expired", { domain_id: row.id });
      return this.#forget();
    }
    // A claim another app won is not re-checked: its alarm only removes it once it expires.
    if (isLost(row) && trigger === "recheck") return this.#armExpiry(row, now, config.DOMAIN_CLAIM_DAYS);

    const check: Check = { tracked, row, app, config, now, trigger };
    const found = await this.#check(check);
    if (found) await this.#record(check, found);
  }

  /** What DNS, then the provider, say of the claim now; null when another app's claim won the hostname meanwhile. */
  async #check(check: Check): Promise<Found | null> {
    const { tracked, row, app, config } = check;
    const targets = serviceTargets(this.env, app.subdomain);
    const provider = hostnameProvider(config, this.env);
    const dns = await this.#dns(row, targets, config, strangerToHostname(await lastOwnerOf(this.env, row.hostname), app.accountId));
    if (row.status === "pending_dns" || row.status === "error") return this.#afterDns(check, row.status, dns, provider);
    // The provider is asked only when DNS still names this app.
    const ensured = dns.kind === "points" ? await provider.ensure(row.hostname, row.providerRef) : null;
    const ref = ensured ? this.#remember(tracked, ensured.ref) : row.providerRef;
    return { transition: afterVerifyStep(row.status, dns, ensured?.outcome ?? null), ref, asRead: row };
  }

  /** A waiting claim's DNS check; once DNS names the app, the hostname is taken and the provider asked for it. */
  async #afterDns(check: Check, status: "pending_dns" | "error", dns: DnsOutcome, provider: HostnameProvider): Promise<Found | null> {
    const { tracked, row, config, now } = check;
    let transition: Found["transition"] = afterDnsCheck(status, check.trigger, dns, row.reason);
    if (!transition.putRoute) return { transition, ref: row.providerRef, asRead: row };
    // The first verified claim wins: the hostname is taken before the provider hears of it.
    if (!(await takeHostname(this.env, row, now))) {
      await markLost(this.env, row.id, now, row.waitingSince ?? now);
      log("info", "custom domain claim lost", { domain_id: row.id });
      await this.#armExpiry({ waitingSince: row.waitingSince ?? now }, now, config.DOMAIN_CLAIM_DAYS);
      return null;
    }
    const ensured = await provider.ensure(row.hostname, row.providerRef);
    const ref = this.#remember(tracked, ensured.ref);
    if (ensured.outcome.kind === "failed") transition = { status: "error", reason: ensured.outcome.reason, putRoute: false, next: "recheck" };
    return { transition, ref, asRead: { status: "verifying", nextCheckAt: row.nextCheckAt } };
  }

  /** Writes what the check found (unless the claim changed meanwhile), sets the next alarm, and tells the account of a move. */
  async #record(check: Check, found: Found): Promise<void> {
    const { row, app, config, now, trigger } = check;
    const { transition } = found;
    const nextCheckAt = this.#nextAt(transition.next, now, config);
    const served = transition.status === "verifying" || transition.status === "active";
    const waitingSince = served ? null : (row.waitingSince ?? now);
    const written = await updateDomain(
      this.env,
      row.id,
      {
        status: transition.status,
        reason: transition.status === "error" ? transition.reason : null,
        routeReady: served,
        https: transition.https ?? (transition.status === "active" ? row.https : false),
        providerRef: found.ref,
        lastCheckedAt: now,
        nextCheckAt,
        waitingSince,
      },
      found.asRead,
    );
    if (!written) return this.#rearm(row.id, now, config.DOMAIN_CLAIM_DAYS);
    if (transition.status === "active" && row.status !== "active") await recordActiveOwner(this.env, { hostname: row.hostname, accountId: app.accountId, now });
    if (nextCheckAt === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(waitingSince === null ? nextCheckAt : Math.min(nextCheckAt, claimExpiresAt(waitingSince, config.DOMAIN_CLAIM_DAYS)));
    if (transition.status !== row.status) log("info", "custom domain moved", { domain_id: row.id, from: row.status, to: transition.status, trigger });
    if (transition.status !== row.status) await notifyDomain(this.env, app, row, transition.status, transition.reason, now);
  }

  /** A lost claim's only alarm: its expiry. */
  async #armExpiry(row: { waitingSince: number | null }, now: number, claimDays: number): Promise<void> {
    await this.ctx.storage.setAlarm(claimExpiresAt(row.waitingSince ?? now, claimDays));
  }

  /** The claim changed while it was checked (another app's won): the alarm follows what it is now. */
  async #rearm(id: string, now: number, claimDays: number): Promise<void> {
    const current = await getDomainById(this.env, id);
    if (!current) return this.#forget();
    if (isLost(current)) return this.#armExpiry(current, now, claimDays);
    if (current.nextCheckAt !== null) await this.ctx.storage.setAlarm(current.nextCheckAt);
  }

  /** Keeps the provider's id at once, so a removal can delete it even if the D1 write after fails. */
  #remember(tracked: Tracked, ref: string | null): string | null {
    if (ref !== tracked.providerRef) this.ctx.storage.kv.put<Tracked>("domain", { ...tracked, providerRef: ref });
    return ref;
  }

  /**
   * What DNS says of this claim: it names this app, or reaches the service and a TXT record proves
   * the claim (always needed by a `stranger`: the hostname was last Active for another account).
   */
  async #dns(row: DomainRow, targets: ServiceTargets, config: Config, stranger: boolean): Promise<DnsOutcome> {
    const resolver = { url: config.DNS_RESOLVER_URL, timeoutMs: config.DNS_TIMEOUT_SECONDS * 1000 };
    const lookup = await lookupRecords(resolver, row.hostname);
    if (!lookup.ok) return { kind: "lookup_failed", reason: lookup.reason };
    const pointing = pointsToService(row.hostname, lookup.records, targets);
    if (!needsTxt(pointing, stranger)) return proveClaim(row.hostname, pointing, null, row.token);
    const txt = await lookupTxt(resolver, verificationRecord(row.hostname, row.token).name);
    if (!txt.ok) return { kind: "lookup_failed", reason: txt.reason };
    return proveClaim(row.hostname, pointing, txt.values, row.token, stranger);
  }

  #nextAt(next: NextCheck, now: number, config: Config): number | null {
    if (next === "none") return null;
    if (next === "active") return now + config.DOMAIN_ACTIVE_RECHECK_SECONDS * 1000;
    const recheckMs = config.DOMAIN_RECHECK_SECONDS * 1000;
    return now + (next === "soon" ? Math.min(VERIFY_POLL_MS, recheckMs) : recheckMs);
  }
}

/** The checker of a custom domain. */
export function domainChecker(env: Env, domainId: string) {
  return env.DOMAIN_CHECKER.get(env.DOMAIN_CHECKER.idFromName(domainId));
}
