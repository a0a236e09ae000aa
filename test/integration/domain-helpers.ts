import { env } from "cloudflare:workers";
import type { StandInEntry } from "../../scripts/dev-dns";

/** The DoH stand-in's base address (vitest.config.ts starts it; DNS_RESOLVER_URL points at it). */
export const dnsBase = () => env.DNS_RESOLVER_URL.replace(/\/dns-query$/, "");

/** Sets a name's records (or a failure) on the DoH stand-in, over its HTTP interface. */
export async function setDns(name: string, entry: StandInEntry): Promise<void> {
  const res = await fetch(`${dnsBase()}/records/${encodeURIComponent(name)}`, { method: "PUT", body: JSON.stringify(entry) });
  if (res.status !== 204) throw new Error(`DoH stand-in answered ${res.status}`);
}

export async function clearDns(name: string): Promise<void> {
  await fetch(`${dnsBase()}/records/${encodeURIComponent(name)}`, { method: "DELETE" });
}

let n = 0;
/** A hostname no other test uses. */
export const uniqueHost = (label = "shop") => `${label}-${Date.now() % 1000000}-${++n}.example.test`;
