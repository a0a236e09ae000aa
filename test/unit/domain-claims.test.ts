import { describe, expect, it } from "vitest";
import {
  LOST_REASON,
  VERIFY_PER_ACCOUNT,
  VERIFY_PER_DOMAIN,
  claimExpired,
  expiryNote,
  expiryNoteShown,
  hostnameTaken,
  isLost,
  needsTxt,
  proveClaim,
  strangerToHostname,
  unclaimableDomains,
  verificationRecord,
} from "../../src/domains/claims";
import { txtText } from "../../src/domains/dns";
import { checkHostname } from "../../src/domains/hostname";
import { gcra } from "../../src/http/gcra";
import type { Pointing } from "../../src/domains/pointing";
import type { DomainStatus } from "../../src/domains/states";

// Custom domains: a hostname goes to whoever its DNS names, never to whoever asked first
// (src/domains/claims.ts states each rule).

const S = "shop.example.com";
const TOKEN = "0123456789abcdef0123456789abcdef";
const DAY = 86_400_000;

describe("a pending claim locks nothing: DOMAIN_TAKEN only while another app holds it", () => {
  it.each<[string, { appId: string; status: DomainStatus }[], boolean]>([
    ["no claims", [], false],
    ["another app, Pending DNS", [{ appId: "other", status: "pending_dns" }], false],
    ["another app, Error", [{ appId: "other", status: "error" }], false],
    ["several other apps waiting", [{ appId: "x", status: "pending_dns" }, { appId: "y", status: "error" }], false],
    ["another app, Verifying…", [{ appId: "other", status: "verifying" }], true],
    ["another app, Active", [{ appId: "other", status: "active" }], true],
    ["this app already claims it", [{ appId: "me", status: "pending_dns" }], true],
  ])("%s", (_name, claims, taken) => {
    expect(hostnameTaken(claims, "me")).toBe(taken);
  });
});

describe("DNS decides: a CNAME to the app's hostname names that app; the shared target needs the claim's TXT", () => {
  const app: Pointing = { points: true, via: "app" };
  const shared: Pointing = { points: true, via: "shared" };
  const nowhere: Pointing = { points: false, reason: `${S} has no CNAME record; expected a CNAME to web.apps.example.net` };
  it.each<[string, Pointing, string[] | null, { kind: string; reason?: string }]>([
    ["CNAME to this app's hostname, no TXT asked", app, null, { kind: "points" }],
    ["not pointing", nowhere, null, { kind: "not_pointing", reason: nowhere.points ? "" : nowhere.reason }],
    ["shared, no TXT record", shared, [], { kind: "not_pointing", reason: `${S} points to the service, but no TXT record proves which app: add a TXT record at _cp-challenge.${S} holding this domain's verification value` }],
    ["shared, another claim's TXT", shared, ["ffffffffffffffffffffffffffffffff"], { kind: "not_pointing", reason: `${S} points to the service, but the TXT record at _cp-challenge.${S} does not hold this domain's verification value` }],
    ["shared, this claim's TXT", shared, [TOKEN], { kind: "points" }],
    ["shared, this claim's TXT among others", shared, ["v=spf1 -all", ` ${TOKEN} `], { kind: "points" }],
  ])("%s", (_name, pointing, txt, outcome) => {
    expect(proveClaim(S, pointing, txt, TOKEN)).toEqual(outcome);
  });

  it("asks for the TXT only when the shared target or addresses were the way in", () => {
    expect([needsTxt({ points: true, via: "app" }), needsTxt({ points: true, via: "shared" }), needsTxt({ points: false, reason: "x" })]).toEqual([false, true, false]);
  });

  it("names the record at _cp-challenge.<hostname> holding the claim's token", () => {
    expect(verificationRecord(S, TOKEN)).toEqual({ type: "TXT", name: `_cp-challenge.${S}`, value: TOKEN });
  });

  it.each([
    ['"abc"', "abc"],
    ['"ab" "c"', "abc"],
    ['"a \\"quoted\\" word"', 'a "quoted" word'],
    ["bare", "bare"],
  ])("reads the TXT data %s as %s", (data, text) => {
    expect(txtText(data)).toBe(text);
  });
});

describe("a hostname that was Active for one account needs the TXT proof from any other", () => {
  const app: Pointing = { points: true, via: "app" };
  const shared: Pointing = { points: true, via: "shared" };
  const stranger = `${S} was verified for another account before, so its CNAME alone does not prove this claim: add a TXT record at _cp-challenge.${S} holding this domain's verification value`;
  it.each<[string, string | null, boolean]>([
    ["never Active", null, false],
    ["last Active for this account", "acct-a", false],
    ["last Active for another account", "acct-b", true],
  ])("%s", (_name, lastOwner, expected) => {
    expect(strangerToHostname(lastOwner, "acct-a")).toBe(expected);
  });

  it.each<[string, Pointing, string[] | null, { kind: string; reason?: string }]>([
    ["stranger, CNAME to its app, no TXT record", app, [], { kind: "not_pointing", reason: stranger }],
    ["stranger, CNAME to its app, another claim's TXT", app, ["ffffffffffffffffffffffffffffffff"], { kind: "not_pointing", reason: stranger }],
    ["stranger, CNAME to its app, this claim's TXT", app, [TOKEN], { kind: "points" }],
    ["stranger, shared target, this claim's TXT", shared, [TOKEN], { kind: "points" }],
  ])("%s", (_name, pointing, txt, outcome) => {
    expect(proveClaim(S, pointing, txt, TOKEN, true)).toEqual(outcome);
  });

  it("asks a stranger for the TXT whatever the way in", () => {
    expect([needsTxt(app, true), needsTxt(shared, true), needsTxt({ points: false, reason: "x" }, true)]).toEqual([true, true, false]);
  });
});

describe("the first verified claim wins: the others are Error and not re-checked", () => {
  it.each<[string, { status: DomainStatus; nextCheckAt: number | null }, boolean]>([
    ["Error, no re-check planned", { status: "error", nextCheckAt: null }, true],
    ["Error, re-checked", { status: "error", nextCheckAt: 1 }, false],
    ["Pending DNS", { status: "pending_dns", nextCheckAt: 1 }, false],
    ["Active", { status: "active", nextCheckAt: null }, false],
  ])("%s", (_name, claim, lost) => {
    expect(isLost(claim)).toBe(lost);
  });

  it("says so", () => expect(LOST_REASON).toBe("Another app verified this hostname."));
});

describe("expiry: a claim waiting DOMAIN_CLAIM_DAYS is removed; its note is kept 30 days", () => {
  const since = Date.UTC(2026, 0, 1);
  it.each<[string, DomainStatus, number | null, number, boolean]>([
    ["Pending DNS, a moment before 7 days", "pending_dns", since, since + 7 * DAY - 1, false],
    ["Pending DNS, at 7 days", "pending_dns", since, since + 7 * DAY, true],
    ["Error, after 7 days", "error", since, since + 8 * DAY, true],
    ["Verifying…, never", "verifying", null, since + 30 * DAY, false],
    ["Active, never", "active", null, since + 30 * DAY, false],
  ])("%s", (_name, status, waitingSince, now, expired) => {
    expect(claimExpired({ status, waitingSince }, now, 7)).toBe(expired);
  });

  it("counts DOMAIN_CLAIM_DAYS as configured", () => {
    expect(claimExpired({ status: "pending_dns", waitingSince: since }, since + 2 * DAY, 2)).toBe(true);
  });

  it.each([
    [0, true],
    [29 * DAY, true],
    [30 * DAY, false],
  ])("shows the note %i ms after the removal: %s", (after, shown) => {
    expect(expiryNoteShown(since, since + after)).toBe(shown);
  });

  it("words the note in one line", () => {
    expect(expiryNote(S, 7)).toBe(`${S} was removed: its DNS did not verify it for this app within 7 days.`);
    expect(expiryNote(S, 1)).toBe(`${S} was removed: its DNS did not verify it for this app within 1 day.`);
  });
});

describe("Verify now: one press per 10 s per domain, 30 an hour per account", () => {
  it("per domain: the second press within 10 s waits the rest of the 10 s", () => {
    const first = gcra(null, 0, VERIFY_PER_DOMAIN);
    expect(first.allowed).toBe(true);
    expect(gcra(first.tat, 4000, VERIFY_PER_DOMAIN)).toMatchObject({ allowed: false, retryAfterSeconds: 6 });
    expect(gcra(first.tat, 10_000, VERIFY_PER_DOMAIN).allowed).toBe(true);
  });

  it("per account: 30 at once, then 30 an hour", () => {
    let tat: number | null = null;
    for (let i = 0; i < 30; i++) {
      const d = gcra(tat, 0, VERIFY_PER_ACCOUNT);
      expect(d.allowed).toBe(true);
      tat = d.tat;
    }
    expect(gcra(tat, 0, VERIFY_PER_ACCOUNT)).toMatchObject({ allowed: false, retryAfterSeconds: 120 });
    expect(gcra(tat, 120_000, VERIFY_PER_ACCOUNT).allowed).toBe(true);
  });
});

describe("names that can never be claimed come from configuration", () => {
  const config = { APPS_DOMAIN: "apps.example.net", CUSTOM_DOMAIN_TARGET: "edge.example.net", SERVICE_HOSTNAMES: ["console.example.net", "api.example.net"] };
  const own = unclaimableDomains(config);
  it.each([
    ["apps.example.net", false],
    ["web.apps.example.net", false],
    ["edge.example.net", false],
    ["console.example.net", false],
    ["api.example.net", false],
    ["x.api.example.net", false],
    ["example.net", true],
    ["shop.example.com", true],
    ["notapps.example.net", true],
  ])("%s claimable: %s", (hostname, claimable) => {
    expect(checkHostname(hostname, own).ok).toBe(claimable);
  });

  it("leaves out what is not configured", () => {
    expect(unclaimableDomains({ APPS_DOMAIN: "localhost", CUSTOM_DOMAIN_TARGET: "", SERVICE_HOSTNAMES: [] })).toEqual(["localhost"]);
  });
});
