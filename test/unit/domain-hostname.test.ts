import { describe, expect, it } from "vitest";
import { HOSTNAME_MESSAGES as M, checkHostname, isApex } from "../../src/domains/hostname";

// SPEC.md Resources "Custom domain" and issue 15: a valid lowercase DNS name (IDN converted to
// punycode), 253 characters at most, not under the service's own domains.

const OWN = ["apps.example.net", "console.example.net"];
const long = (n: number) => `${Array.from({ length: Math.ceil(n / 50) }, () => "a".repeat(49)).join(".")}`.slice(0, n - 4).replace(/\.$/, "a") + ".com";

describe("checkHostname", () => {
  it.each<[string, string | { error: string }]>([
    ["shop.example.com", "shop.example.com"],
    ["Shop.Example.COM", "shop.example.com"],
    ["  shop.example.com  ", "shop.example.com"],
    ["shop.example.com.", "shop.example.com"],
    ["example.com", "example.com"],
    ["a-b.c-d.example.co.uk", "a-b.c-d.example.co.uk"],
    ["bücher.example", "xn--bcher-kva.example"],
    ["BÜCHER.example", "xn--bcher-kva.example"],
    ["xn--bcher-kva.example", "xn--bcher-kva.example"],
    ["例え.テスト", "xn--r8jz45g.xn--zckzah"],
    ["", { error: M.empty }],
    ["   ", { error: M.empty }],
    ["https://shop.example.com", { error: M.shape }],
    ["shop.example.com/path", { error: M.shape }],
    ["shop.example.com:8080", { error: M.shape }],
    ["shop example.com", { error: M.shape }],
    ["user@shop.example.com", { error: M.shape }],
    ["*.example.com", { error: M.wildcard }],
    ["203.0.113.7", { error: M.address }],
    ["[2001:db8::1]", { error: M.shape }],
    ["localhost", { error: M.labels }],
    ["shop.example.com1", "shop.example.com1"],
    ["shop..example.com", { error: M.label }],
    ["-shop.example.com", { error: M.label }],
    ["shop-.example.com", { error: M.label }],
    ["my_shop.example.com", { error: M.label }],
    [`${"a".repeat(64)}.example.com`, { error: M.label }],
    [`${"a".repeat(63)}.example.com`, `${"a".repeat(63)}.example.com`],
    ["shop.example.123", { error: M.tld }],
    ["apps.example.net", { error: M.own("apps.example.net") }],
    ["myapp.apps.example.net", { error: M.own("apps.example.net") }],
    ["MyApp.Apps.Example.Net.", { error: M.own("apps.example.net") }],
    ["console.example.net", { error: M.own("console.example.net") }],
    ["notapps.example.net", "notapps.example.net"],
    ["example.net", "example.net"],
  ])("%j", (input, expected) => {
    const result = checkHostname(input, OWN);
    if (typeof expected === "string") expect(result).toEqual({ ok: true, hostname: expected });
    else expect(result).toEqual({ ok: false, message: expected.error });
  });

  it("takes 253 characters and refuses 254", () => {
    expect(long(253)).toHaveLength(253);
    expect(checkHostname(long(253), OWN)).toEqual({ ok: true, hostname: long(253) });
    expect(checkHostname(`a${long(253)}`, OWN)).toEqual({ ok: false, message: M.long });
  });

  it("counts the length after punycode conversion", () => {
    const name = `例え日本語テスト漢字.${long(235)}`;
    expect(name.length).toBeLessThanOrEqual(253);
    const result = checkHostname(name, OWN);
    expect(result).toEqual({ ok: false, message: M.long });
  });
});

describe("isApex", () => {
  it.each([
    ["example.com", true],
    ["shop.example.com", false],
    ["a.b.example.com", false],
  ])("%s -> %s", (hostname, apex) => expect(isApex(hostname)).toBe(apex));
});
