import { describe, expect, it } from "vitest";
import { appSubdomainOf, normalHost } from "../../src/routing/hosts";

// Issue 12, "Serving apps": requests whose Host is `<subdomain>.<APPS_DOMAIN>` go to the app; the
// console and API hosts are unaffected.
const CASES: [string | undefined, string, string | null][] = [
    ["myapp.localhost:8787", "localhost", "myapp"],
    ["myapp.localhost", "localhost", "myapp"],
    ["MyApp.LocalHost:8787", "localhost", "myapp"],
    ["myapp.apps.example.net.", "apps.example.net", "myapp"],
    ["localhost:8787", "localhost", null],
    ["apps.example.net", "apps.example.net", null],
    ["control.example.net", "apps.example.net", null],
    ["evilapps.example.net", "apps.example.net", null],
    ["a.b.localhost", "localhost", "a.b"],
    [undefined, "localhost", null],
];

describe("appSubdomainOf", () => {
  it.each(CASES)("%s under %s -> %s", (host, domain, expected) => {
    expect(appSubdomainOf(host, domain)).toBe(expected);
  });

  it("answers the same whatever host came before (the last host's normal form is remembered)", () => {
    const order = [...CASES, ...[...CASES].reverse(), ...CASES.flatMap((c) => [c, c])];
    expect(order.map(([host, domain]) => appSubdomainOf(host, domain))).toEqual(order.map(([, , expected]) => expected));
    expect(["A.localhost", "a.localhost", " A.LOCALHOST:1 ", "A.localhost"].map(normalHost)).toEqual(["a.localhost", "a.localhost", "a.localhost", "a.localhost"]);
  });
});
