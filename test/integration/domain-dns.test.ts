import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { lookupRecords } from "../../src/domains/dns";
import { pointsToService } from "../../src/domains/pointing";
import { setDns, uniqueHost } from "./domain-helpers";

// Issue 15, "Real parts", DNS: DNS-over-HTTPS JSON with timeouts; the resolver's failures become
// an Error reason "DNS lookup failed: ...", never a crash. The resolver is the DoH stand-in
// (scripts/dev-dns.ts), reached over real HTTP.

const resolver = () => ({ url: env.DNS_RESOLVER_URL, timeoutMs: 1000 });

describe("lookupRecords", () => {
  it("reads a CNAME chain and the addresses at its end, as a resolver answers them", async () => {
    const host = uniqueHost();
    const middle = uniqueHost("www");
    await setDns(host, [{ type: "CNAME", data: `${middle}.` }]);
    await setDns(middle, [{ type: "CNAME", data: "web.apps.example.net" }]);
    await setDns("web.apps.example.net", [{ type: "A", data: "192.0.2.10" }, { type: "AAAA", data: "2001:DB8::10" }]);
    const lookup = await lookupRecords(resolver(), host);
    expect(lookup).toEqual({
      ok: true,
      records: [
        { name: host, type: "CNAME", data: middle },
        { name: middle, type: "CNAME", data: "web.apps.example.net" },
        { name: "web.apps.example.net", type: "A", data: "192.0.2.10" },
        { name: "web.apps.example.net", type: "AAAA", data: "2001:db8::10" },
      ],
    });
    expect(lookup.ok && pointsToService(host, lookup.records, { appHostname: "web.apps.example.net", target: "", addresses: [] })).toEqual({ points: true, via: "app" });
  });

  it("gives no records for a name that does not exist (NXDOMAIN)", async () => {
    expect(await lookupRecords(resolver(), uniqueHost("missing"))).toEqual({ ok: true, records: [] });
  });

  it.each([
    ["SERVFAIL", { fail: "SERVFAIL" as const }, (h: string) => `DNS lookup failed: the resolver answered SERVFAIL for ${h}`],
    ["REFUSED", { fail: "REFUSED" as const }, (h: string) => `DNS lookup failed: the resolver answered REFUSED for ${h}`],
    ["an HTTP error", { fail: "HTTP_502" as const }, () => "DNS lookup failed: the resolver answered HTTP 502"],
    ["no answer in time", { fail: "TIMEOUT" as const }, () => "DNS lookup failed: no answer from the resolver within 1 seconds"],
  ])("turns %s into a sentence", async (_name, entry, reason) => {
    const host = uniqueHost("broken");
    await setDns(host, entry);
    expect(await lookupRecords(resolver(), host)).toEqual({ ok: false, reason: reason(host) });
  });

  it("says so when the resolver cannot be reached, and when its answer is not DNS JSON", async () => {
    expect(await lookupRecords({ url: "http://127.0.0.1:9/dns-query", timeoutMs: 1000 }, "shop.example.com")).toEqual({
      ok: false,
      reason: "DNS lookup failed: the resolver could not be reached",
    });
    const notJson = { url: `${env.DNS_RESOLVER_URL.replace(/\/dns-query$/, "")}/records`, timeoutMs: 1000 };
    expect(await lookupRecords(notJson, "shop.example.com")).toEqual({ ok: false, reason: "DNS lookup failed: the resolver's answer was not DNS JSON" });
  });
});
