import { describe, expect, it } from "vitest";
import { appSubdomainOf } from "../../src/routing/hosts";

// Issue 12, "Serving apps": requests whose Host is `<subdomain>.<APPS_DOMAIN>` go to the app; the
// console and API hosts are unaffected.
describe("appSubdomainOf", () => {
  it.each<[string | undefined, string, string | null]>([
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
  ])("%s under %s -> %s", (host, domain, expected) => {
    expect(appSubdomainOf(host, domain)).toBe(expected);
  });
});
