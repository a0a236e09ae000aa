import { describe, expect, it } from "vitest";
import { appHostname, generatedSubdomain, RESERVED_SUBDOMAINS, subdomainProblem } from "../../src/apps/contract/subdomain";

// SPEC.md Limits, Subdomain: 3 to 63 characters; lowercase letters, digits, hyphens; no leading or
// trailing hyphen; must not start with `app-`; further names reserved. Blank gives a generated
// hostname derived from the app id.

const LENGTH = "A subdomain is 3 to 63 characters long.";
const CHARACTERS = "Use only lowercase letters, digits and hyphens in a subdomain.";
const HYPHEN = "A subdomain cannot start or end with a hyphen.";
const PREFIX = 'Subdomains starting with "app-" are kept for generated names.';

describe("subdomainProblem", () => {
  it.each<[string, string | null]>([
    ["abc", null],
    ["my-shop", null],
    ["shop42", null],
    ["42", LENGTH],
    ["a".repeat(63), null],
    ["a".repeat(64), LENGTH],
    ["", LENGTH],
    ["ab", LENGTH],
    ["My-Shop", CHARACTERS],
    ["my_shop", CHARACTERS],
    ["my.shop", CHARACTERS],
    ["café", CHARACTERS],
    ["my shop", CHARACTERS],
    ["-shop", HYPHEN],
    ["shop-", HYPHEN],
    ["app-shop", PREFIX],
    ["app-3f2a9c1be0d4", PREFIX],
    ["apps", 'The subdomain "apps" is reserved.'],
    ["application", null],
    ["www", 'The subdomain "www" is reserved.'],
    ["api", 'The subdomain "api" is reserved.'],
    ["console", 'The subdomain "console" is reserved.'],
    ["xn--bcher-kva", "A subdomain cannot have hyphens in both its third and fourth places."],
    ["ab-cd--e", null],
  ])("%j", (name, expected) => {
    expect(subdomainProblem(name)).toBe(expected);
  });

  it("every reserved name would otherwise pass, so each entry matters", () => {
    for (const name of RESERVED_SUBDOMAINS) {
      expect(name).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/);
      expect(subdomainProblem(name)).toBe(`The subdomain "${name}" is reserved.`);
    }
  });
});

describe("generatedSubdomain", () => {
  it.each<[string, string]>([
    ["3f2a9c1b-e0d4-4c6a-9f7e-0123456789ab", "app-3f2a9c1be0d4"],
    ["3F2A9C1B-E0D4-4C6A-9F7E-0123456789AB", "app-3f2a9c1be0d4"],
    ["00000000-0000-4000-8000-000000000000", "app-000000000000"],
  ])("%s -> %s", (appId, expected) => {
    const name = generatedSubdomain(appId);
    expect(name).toBe(expected);
    // The one rule a generated name is exempt from is the prefix.
    expect(subdomainProblem(name)).toBe(PREFIX);
  });

  it("refuses an id that is not a UUID", () => {
    expect(() => generatedSubdomain("shop")).toThrow('An app id must be a UUID, got "shop".');
  });
});

describe("appHostname", () => {
  it.each<[string, string, string]>([
    ["shop", "apps.example.net", "shop.apps.example.net"],
    ["shop", " Apps.Example.NET. ", "shop.apps.example.net"],
    ["app-3f2a9c1be0d4", "localhost", "app-3f2a9c1be0d4.localhost"],
  ])("%s on %j", (subdomain, domain, expected) => {
    expect(appHostname(subdomain, domain)).toBe(expected);
  });
});
