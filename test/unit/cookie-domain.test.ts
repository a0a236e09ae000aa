import { describe, expect, it } from "vitest";
import { domainCoversAppsDomain, hostOnlyCookie, keepCookiesHome } from "../../src/routing/cookie-domain";

// Cookies stay with their app: a Set-Cookie whose Domain covers APPS_DOMAIN (so every app, and the
// console under a parent of it) becomes host-only; any other cookie passes unchanged.

const APPS = "apps.example.net";

describe("domainCoversAppsDomain", () => {
  it.each([
    ["apps.example.net", true],
    [".apps.example.net", true],
    ["APPS.Example.NET", true],
    ["apps.example.net.", true],
    [" apps.example.net ", true],
    ["example.net", true],
    [".example.net", true],
    ["net", true],
    ["shop.apps.example.net", false],
    [".shop.apps.example.net", false],
    ["ps.example.net", false],
    ["xapps.example.net", false],
    ["other.example", false],
    ["", false],
    [".", false],
  ])("Domain=%s -> %s", (domain, covers) => {
    expect(domainCoversAppsDomain(domain, APPS)).toBe(covers);
  });
});

describe("hostOnlyCookie", () => {
  it.each([
    ["sid=1; Path=/; Domain=apps.example.net; HttpOnly", "sid=1; Path=/; HttpOnly"],
    ["sid=1; domain=.EXAMPLE.net", "sid=1"],
    ["sid=1;Domain = example.net;Secure", "sid=1;Secure"],
    // Browsers take the last Domain; every one goes when any covers APPS_DOMAIN.
    ["sid=1; Domain=shop.apps.example.net; Domain=apps.example.net", "sid=1"],
    ["sid=1; Domain=apps.example.net; Domain=shop.apps.example.net", "sid=1"],
    ["sid=1; Path=/; Domain=shop.apps.example.net", "sid=1; Path=/; Domain=shop.apps.example.net"],
    ["sid=1; Path=/", "sid=1; Path=/"],
    ["sid=1; Domain=", "sid=1; Domain="],
    // The cookie's own name and value are never read as attributes.
    ["domain=apps.example.net; Path=/", "domain=apps.example.net; Path=/"],
    ["theme=a=b; Domain=apps.example.net; SameSite=Lax", "theme=a=b; SameSite=Lax"],
  ])("%s -> %s", (cookie, out) => {
    expect(hostOnlyCookie(cookie, APPS)).toBe(out);
  });
});

describe("keepCookiesHome", () => {
  it("a reply without cookies is the same reply", () => {
    const res = new Response("x", { headers: { "X-A": "1" } });
    expect(keepCookiesHome(res, APPS)).toBe(res);
  });

  it("rewrites only the cookies that cross, keeping each separate and the order", () => {
    const headers = new Headers();
    headers.append("Set-Cookie", "a=1; Domain=apps.example.net");
    headers.append("Set-Cookie", "b=2; Domain=shop.apps.example.net");
    headers.append("Set-Cookie", "c=3; Path=/; Domain=example.net");
    const out = keepCookiesHome(new Response("x", { headers }), APPS);
    expect(out.headers.getSetCookie()).toEqual(["a=1", "b=2; Domain=shop.apps.example.net", "c=3; Path=/"]);
  });

  it("a rewritten reply keeps its status, other headers and body", async () => {
    const res = new Response("body", { status: 201, headers: { "Set-Cookie": "a=1; Domain=apps.example.net", "X-A": "1" } });
    const out = keepCookiesHome(res, APPS);
    expect(out.status).toBe(201);
    expect(out.headers.get("x-a")).toBe("1");
    expect(out.headers.getSetCookie()).toEqual(["a=1"]);
    expect(await out.text()).toBe("body");
  });
});
