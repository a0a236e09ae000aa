import { isApex } from "./hostname";

/**
 * Issue 15, "Points to the service": a CNAME to the app's hostname or to CUSTOM_DOMAIN_TARGET, or
 * for an apex name A/AAAA records that are all among CUSTOM_DOMAIN_ADDRESSES. Pure: it reads the
 * records a resolver gave (see dns.ts) and decides; the reason sentences say what was found and
 * what was expected.
 *
 * Decisions where the issue leaves room (table tests in test/unit/domain-pointing.test.ts):
 * - A CNAME chain points when a name along it is one of our targets (shop -> www -> app host),
 *   or when it ends in addresses that are all ours: either way the traffic reaches the service.
 *   A chain through another app's hostname (a name under APPS_DOMAIN) points to that app, never
 *   to this one, whatever follows it.
 * - Address records point only when there is at least one and every one is ours; one foreign
 *   address among ours sends part of the traffic elsewhere, so it does not point.
 * - Address records are accepted on any name, not only an apex: they reach the service too. The
 *   record the console asks for is an A record for an apex name (two labels) when addresses are
 *   configured, else a CNAME.
 */

export type RecordType = "CNAME" | "A" | "AAAA";

/** One answer record, names lowercase without the trailing dot. */
export interface DnsRecord {
  name: string;
  type: RecordType;
  data: string;
}

/** What a domain must point to: the app's hostname, CUSTOM_DOMAIN_TARGET ("" when unset), CUSTOM_DOMAIN_ADDRESSES. */
export interface ServiceTargets {
  appHostname: string;
  target: string;
  addresses: readonly string[];
}

/** The DNS record the console asks the owner to create (issue 15: type, name, target). */
export interface DnsRecordToCreate {
  type: "CNAME" | "A" | "AAAA";
  name: string;
  target: string;
}

/**
 * `app`: the records name this app (a CNAME chain through its own hostname), so they prove the
 * claim by themselves. `shared`: they reach the service through CUSTOM_DOMAIN_TARGET or the shared
 * addresses, which name no app (a TXT record must say which; see claims.ts).
 */
export type Pointing = { points: true; via: "app" | "shared" } | { points: false; reason: string };

/** CNAME chains longer than this are treated as loops (resolvers stop near here too). */
export const MAX_CNAME_HOPS = 8;

const norm = (name: string) => name.trim().toLowerCase().replace(/\.$/, "");

export function recordToCreate(hostname: string, targets: ServiceTargets): DnsRecordToCreate {
  if (isApex(hostname) && targets.addresses.length > 0) {
    const v4 = targets.addresses.filter((a) => !a.includes(":"));
    return v4.length > 0 ? { type: "A", name: hostname, target: v4.join(", ") } : { type: "AAAA", name: hostname, target: targets.addresses.join(", ") };
  }
  return { type: "CNAME", name: hostname, target: targets.target || targets.appHostname };
}

/** "a CNAME to app.apps.example.net", "an A record to 192.0.2.10", "A records only to 192.0.2.10, 192.0.2.11". */
export function expectation(record: DnsRecordToCreate): string {
  if (record.type === "CNAME") return `a CNAME to ${record.target}`;
  return record.target.includes(",") ? `${record.type} records only to ${record.target}` : `an ${record.type} record to ${record.target}`;
}

const describe = (records: readonly DnsRecord[]) => records.map((r) => `${r.type} ${r.data}`).join(", ");

/** Follows CNAME records from `hostname`: the names it leads to, in order. */
function cnameChain(hostname: string, records: readonly DnsRecord[]): string[] {
  const chain: string[] = [];
  let current = hostname;
  for (let hop = 0; hop < MAX_CNAME_HOPS; hop++) {
    const next = records.find((r) => r.type === "CNAME" && norm(r.name) === current);
    if (!next) break;
    current = norm(next.data);
    if (chain.includes(current)) break;
    chain.push(current);
  }
  return chain;
}

/** Does `hostname` point to the service, given the records the resolver answered? */
export function pointsToService(hostname: string, records: readonly DnsRecord[], targets: ServiceTargets): Pointing {
  const accepted = new Set([targets.appHostname, targets.target].map(norm).filter(Boolean));
  const ours = new Set(targets.addresses.map((a) => a.trim().toLowerCase()));
  const record = recordToCreate(hostname, targets);
  const expected = expectation(record);

  const appHostname = norm(targets.appHostname);
  const appsDomain = appHostname.slice(appHostname.indexOf(".") + 1);
  const chain = cnameChain(hostname, records);
  // The first of our names along the chain decides: this app's hostname names this app; another
  // app's hostname (any name under APPS_DOMAIN) names that app, never this one.
  const decisive = chain.find((name) => accepted.has(name) || name === appsDomain || name.endsWith(`.${appsDomain}`));
  const end = chain.length > 0 ? chain[chain.length - 1]! : hostname;
  const addresses = records.filter((r) => (r.type === "A" || r.type === "AAAA") && norm(r.name) === end);
  if (decisive === appHostname) return { points: true, via: "app" };
  if (decisive !== undefined && decisive === norm(targets.target)) return { points: true, via: "shared" };
  if (decisive === undefined && addresses.length > 0 && addresses.every((r) => ours.has(r.data.trim().toLowerCase()))) {
    return { points: true, via: "shared" };
  }

  if (chain.length > 0) {
    const first = records.filter((r) => r.type === "CNAME" && norm(r.name) === hostname);
    return { points: false, reason: `${hostname}: found ${describe(first)}; expected ${expected}` };
  }
  if (addresses.length > 0) return { points: false, reason: `${hostname}: found ${describe(addresses)}; expected ${expected}` };
  const missing = record.type === "CNAME" ? "CNAME" : "A or AAAA";
  return { points: false, reason: `${hostname} has no ${missing} record; expected ${expected}` };
}
