import { describe, expect, it } from "vitest";
import { type DnsRecord, type ServiceTargets, expectation, pointsToService, recordToCreate } from "../../src/domains/pointing";

// Issue 15, "Points to the service": a CNAME to the app's hostname or to CUSTOM_DOMAIN_TARGET, or,
// for an apex name, A/AAAA records that are all among CUSTOM_DOMAIN_ADDRESSES. CNAME chains and
// mixed records are decided here (src/domains/pointing.ts says why).

const APP = "web.apps.example.net";
const T: ServiceTargets = { appHostname: APP, target: "", addresses: [] };
const TT: ServiceTargets = { appHostname: APP, target: "edge.example.net", addresses: ["192.0.2.10", "192.0.2.11", "2001:db8::10"] };
const cname = (name: string, data: string): DnsRecord => ({ name, type: "CNAME", data });
const a = (name: string, data: string): DnsRecord => ({ name, type: "A", data });
const aaaa = (name: string, data: string): DnsRecord => ({ name, type: "AAAA", data });
const S = "shop.example.com";

describe("pointsToService", () => {
  it.each<[string, string, DnsRecord[], ServiceTargets, true | string]>([
    ["CNAME to the app's hostname", S, [cname(S, APP)], T, true],
    ["CNAME with trailing dot and capitals", S, [cname(S, "Web.Apps.Example.Net.")], T, true],
    ["CNAME to CUSTOM_DOMAIN_TARGET", S, [cname(S, "edge.example.net")], TT, true],
    ["CNAME to the app's hostname when a target is also set", S, [cname(S, APP)], TT, true],
    ["CNAME to the target when none is set", S, [cname(S, "edge.example.net")], T, `${S}: found CNAME edge.example.net; expected a CNAME to ${APP}`],
    ["CNAME chain through the owner's own name", S, [cname(S, "www.example.com"), cname("www.example.com", APP)], T, true],
    ["CNAME chain with the target's addresses after it", S, [cname(S, APP), a(APP, "198.51.100.5")], T, true],
    ["CNAME chain ending in our addresses", S, [cname(S, "lb.example.com"), a("lb.example.com", "192.0.2.10")], TT, true],
    ["CNAME chain ending in foreign addresses", S, [cname(S, "lb.example.com"), a("lb.example.com", "203.0.113.7")], TT, `${S}: found CNAME lb.example.com; expected a CNAME to edge.example.net`],
    ["CNAME elsewhere", S, [cname(S, "shops.myshopify.com")], T, `${S}: found CNAME shops.myshopify.com; expected a CNAME to ${APP}`],
    ["CNAME loop", S, [cname(S, "x.example.com"), cname("x.example.com", S)], T, `${S}: found CNAME x.example.com; expected a CNAME to ${APP}`],
    ["nothing at all", S, [], T, `${S} has no CNAME record; expected a CNAME to ${APP}`],
    ["a record for another name only", S, [a("other.example.com", "192.0.2.10")], TT, `${S} has no CNAME record; expected a CNAME to edge.example.net`],
    ["A record on a subdomain, no addresses configured", S, [a(S, "203.0.113.7")], T, `${S}: found A 203.0.113.7; expected a CNAME to ${APP}`],
    ["A record on a subdomain, ours", S, [a(S, "192.0.2.10")], TT, true],
    ["apex, A records all ours", "example.com", [a("example.com", "192.0.2.10"), a("example.com", "192.0.2.11")], TT, true],
    ["apex, A and AAAA all ours", "example.com", [a("example.com", "192.0.2.10"), aaaa("example.com", "2001:db8::10")], TT, true],
    ["apex, AAAA ours in capitals", "example.com", [aaaa("example.com", "2001:DB8::10")], TT, true],
    ["apex, mixed ours and foreign", "example.com", [a("example.com", "192.0.2.10"), a("example.com", "203.0.113.7")], TT, "example.com: found A 192.0.2.10, A 203.0.113.7; expected A records only to 192.0.2.10, 192.0.2.11"],
    ["apex, foreign AAAA beside our A", "example.com", [a("example.com", "192.0.2.10"), aaaa("example.com", "2001:db8::99")], TT, "example.com: found A 192.0.2.10, AAAA 2001:db8::99; expected A records only to 192.0.2.10, 192.0.2.11"],
    ["apex, nothing", "example.com", [], TT, "example.com has no A or AAAA record; expected A records only to 192.0.2.10, 192.0.2.11"],
    ["CNAME to another app's hostname", S, [cname(S, "shop.apps.example.net")], TT, `${S}: found CNAME shop.apps.example.net; expected a CNAME to edge.example.net`],
    ["CNAME to another app's hostname ending in our addresses", S, [cname(S, "shop.apps.example.net"), a("shop.apps.example.net", "192.0.2.10")], TT, `${S}: found CNAME shop.apps.example.net; expected a CNAME to edge.example.net`],
    ["apex without configured addresses asks for a CNAME", "example.com", [a("example.com", "203.0.113.7")], T, `example.com: found A 203.0.113.7; expected a CNAME to ${APP}`],
  ])("%s", (_name, hostname, records, targets, expected) => {
    const result = pointsToService(hostname, records, targets);
    if (expected === true) expect(result.points).toBe(true);
    else expect(result).toEqual({ points: false, reason: expected });
  });

  it("words the issue's examples", () => {
    const targets = { appHostname: "myapp.apps.example.net", target: "", addresses: [] };
    expect(pointsToService(S, [], targets)).toEqual({ points: false, reason: "shop.example.com has no CNAME record; expected a CNAME to myapp.apps.example.net" });
    expect(pointsToService(S, [a(S, "203.0.113.7")], targets)).toEqual({ points: false, reason: "shop.example.com: found A 203.0.113.7; expected a CNAME to myapp.apps.example.net" });
  });
});

describe("recordToCreate", () => {
  it.each([
    [S, T, { type: "CNAME", name: S, target: APP }],
    [S, TT, { type: "CNAME", name: S, target: "edge.example.net" }],
    ["example.com", T, { type: "CNAME", name: "example.com", target: APP }],
    ["example.com", TT, { type: "A", name: "example.com", target: "192.0.2.10, 192.0.2.11" }],
    ["example.com", { ...T, addresses: ["192.0.2.10"] }, { type: "A", name: "example.com", target: "192.0.2.10" }],
    ["example.com", { ...T, addresses: ["2001:db8::10"] }, { type: "AAAA", name: "example.com", target: "2001:db8::10" }],
  ] as const)("%s", (hostname, targets, record) => {
    expect(recordToCreate(hostname, targets)).toEqual(record);
  });

  it("is worded as the expectation", () => {
    expect(expectation({ type: "CNAME", name: S, target: APP })).toBe(`a CNAME to ${APP}`);
    expect(expectation({ type: "A", name: "example.com", target: "192.0.2.10" })).toBe("an A record to 192.0.2.10");
  });
});

describe("which app the records name", () => {
  it.each<[string, DnsRecord[], "app" | "shared"]>([
    ["CNAME to the app's hostname names the app", [cname(S, APP)], "app"],
    ["a chain through the app's hostname names the app", [cname(S, "www.example.com"), cname("www.example.com", APP), a(APP, "192.0.2.10")], "app"],
    ["CNAME to the shared target names no app", [cname(S, "edge.example.net")], "shared"],
    ["the shared addresses name no app", [a(S, "192.0.2.10")], "shared"],
    ["a chain ending in the shared addresses names no app", [cname(S, "lb.example.com"), a("lb.example.com", "192.0.2.10")], "shared"],
  ])("%s", (_name, records, via) => {
    expect(pointsToService(S, records, TT)).toEqual({ points: true, via });
  });
});
