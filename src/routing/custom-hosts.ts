import { routedApp } from "../domains/store";
import { normalHost } from "./hosts";

/**
 * Which app a custom hostname routes to. Every request whose host is not an app hostname asks
 * here, the console's and the API's included, so hosts found routing nowhere are remembered for a
 * few seconds per isolate: those requests then cost no D1 read. A hostname that starts routing is
 * served at most that long later (docs/domains.md, rule 3: the route is in place "within a few seconds"); one that
 * stops routing (removed) is never cached as routed, so it stops answering for the app at once.
 */

/** How long a host found routing nowhere is remembered. */
export const UNROUTED_TTL_MS = 3000;
/** Bound on the remembered hosts: the set is cleared when it grows past this. */
const UNROUTED_MAX = 1000;

const unrouted = new Map<string, number>();

/** A name that could be a custom domain: at least two labels, not an IP literal. */
const candidate = (host: string) => host.includes(".") && !/^[\d.]+$/.test(host) && !host.startsWith("[");

export async function customHostnameRoute(env: Env, rawHost: string, now = Date.now()) {
  const host = normalHost(rawHost);
  if (!candidate(host)) return undefined;
  const until = unrouted.get(host);
  if (until !== undefined && until > now) return undefined;
  const app = await routedApp(env, host);
  if (app) {
    unrouted.delete(host);
    return app;
  }
  if (unrouted.size >= UNROUTED_MAX) unrouted.clear();
  unrouted.set(host, now + UNROUTED_TTL_MS);
  return undefined;
}
