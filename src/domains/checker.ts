import { DurableObject } from "cloudflare:workers";
import { getConfig } from "../config";
import { getApp } from "../apps/store";
import { describeError, log } from "../http/log";
import { lookupRecords } from "./dns";
import { type ServiceTargets, pointsToService } from "./pointing";
import { hostnameProvider } from "./provider";
import { type DnsOutcome, type NextCheck, type Transition, type CheckTrigger, afterDnsCheck, afterVerifyStep } from "./states";
import { getDomainById, updateDomain } from "./store";

/** While `Verifying…` the provider is asked again this soon (SPEC.md: route "within a few seconds"). */
export const VERIFY_POLL_MS = 3000;

interface Tracked {
  domainId: string;
  hostname: string;
  providerRef: string | null;
}

/** What a domain must point to, from the settings and the app's hostname. */
export function serviceTargets(env: Env, subdomain: string): ServiceTargets {
  const config = getConfig(env);
  return { appHostname: `${subdomain}.${config.APPS_DOMAIN}`, target: config.CUSTOM_DOMAIN_TARGET, addresses: config.CUSTOM_DOMAIN_ADDRESSES };
}

/**
 * One per custom domain (named by the domain's id): its timer. The alarm runs the automatic
 * re-check every DOMAIN_RECHECK_SECONDS while the domain waits (`Pending DNS`, `Error`), and the
 * provider steps while it is `Verifying…`. Alarms survive restarts; removal deletes the alarm.
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
    if (row.status === "active" && row.nextCheckAt === null) return;

    const config = getConfig(this.env);
    const targets = serviceTargets(this.env, app.subdomain);
    const provider = hostnameProvider(config, this.env);
    const dns = await this.#dns(row.hostname, targets, config.DNS_RESOLVER_URL, config.DNS_TIMEOUT_SECONDS * 1000);
    let ref = row.providerRef;
    let transition: Transition & { https?: boolean };
    if (row.status === "pending_dns" || row.status === "error") {
      transition = afterDnsCheck(row.status, trigger, dns, row.reason);
      if (transition.putRoute) {
        const ensured = await provider.ensure(row.hostname, ref);
        ref = this.#remember(tracked, ensured.ref);
        if (ensured.outcome.kind === "failed") transition = { status: "error", reason: ensured.outcome.reason, putRoute: false, next: "recheck" };
      }
    } else {
      const ensured = dns.kind === "points" ? await provider.ensure(row.hostname, ref) : null;
      if (ensured) ref = this.#remember(tracked, ensured.ref);
      transition = afterVerifyStep(row.status, dns, ensured?.outcome ?? null);
    }

    const now = Date.now();
    const nextCheckAt = this.#nextAt(transition.next, now, config.DOMAIN_RECHECK_SECONDS);
    const served = transition.status === "verifying" || transition.status === "active";
    await updateDomain(this.env, row.id, {
      status: transition.status,
      reason: transition.status === "error" ? transition.reason : null,
      routeReady: served,
      https: transition.https ?? (transition.status === "active" ? row.https : false),
      providerRef: ref,
      lastCheckedAt: now,
      nextCheckAt,
    });
    if (nextCheckAt === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(nextCheckAt);
    if (transition.status !== row.status) log("info", "custom domain moved", { domain_id: row.id, from: row.status, to: transition.status, trigger });
  }

  /** Keeps the provider's id at once, so a removal can delete it even if the D1 write after fails. */
  #remember(tracked: Tracked, ref: string | null): string | null {
    if (ref !== tracked.providerRef) this.ctx.storage.kv.put<Tracked>("domain", { ...tracked, providerRef: ref });
    return ref;
  }

  async #dns(hostname: string, targets: ServiceTargets, url: string, timeoutMs: number): Promise<DnsOutcome> {
    const lookup = await lookupRecords({ url, timeoutMs }, hostname);
    if (!lookup.ok) return { kind: "lookup_failed", reason: lookup.reason };
    const pointing = pointsToService(hostname, lookup.records, targets);
    return pointing.points ? { kind: "points" } : { kind: "not_pointing", reason: pointing.reason };
  }

  #nextAt(next: NextCheck, now: number, recheckSeconds: number): number | null {
    if (next === "none") return null;
    return now + (next === "soon" ? Math.min(VERIFY_POLL_MS, recheckSeconds * 1000) : recheckSeconds * 1000);
  }
}

/** The checker of a custom domain. */
export function domainChecker(env: Env, domainId: string) {
  return env.DOMAIN_CHECKER.get(env.DOMAIN_CHECKER.idFromName(domainId));
}
