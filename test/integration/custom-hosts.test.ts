import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { accounts, apps, customDomains } from "../../src/db/schema";
import { UNROUTED_TTL_MS, customHostnameRoute } from "../../src/routing/custom-hosts";
import { uniqueHost } from "./domain-helpers";

// src/routing/custom-hosts.ts: hosts found routing nowhere are remembered for UNROUTED_TTL_MS per
// isolate (console and API requests then cost no D1 read); a routed hostname is never remembered,
// so removal takes effect at once; a domain that starts routing is served within the TTL.

async function appWithDomain(hostname: string, status: "pending_dns" | "verifying" | "active", routeReady: boolean) {
  const db = database(env);
  const accountId = crypto.randomUUID();
  const appId = crypto.randomUUID();
  const domainId = crypto.randomUUID();
  await db.insert(accounts).values({ id: accountId, email: `${accountId}@example.com`, passwordHash: "x", createdAt: 0 });
  await db.insert(apps).values({
    id: appId, accountId, name: "a", repository: "https://example.com/a", branch: "main", rootDirectory: "", dockerfilePath: "Dockerfile",
    subdomain: `s-${appId.slice(0, 8)}`, plan: "starter", status: "running", createdAt: 0, instanceUrl: "http://127.0.0.1:1",
  });
  await db.insert(customDomains).values({ id: domainId, hostname, appId, status, routeReady, createdAt: 0 });
  return { appId, domainId };
}

describe("customHostnameRoute", () => {
  it.each([
    ["Active", "active", false, true],
    ["Verifying… with its route in place", "verifying", true, true],
    ["Verifying… before the route", "verifying", false, false],
    ["Pending DNS", "pending_dns", false, false],
  ] as const)("%s routes: %s", async (_name, status, routeReady, routed) => {
    const hostname = uniqueHost();
    const { appId } = await appWithDomain(hostname, status, routeReady);
    expect((await customHostnameRoute(env, `${hostname.toUpperCase()}:443`))?.id).toBe(routed ? appId : undefined);
  });

  it("remembers an unrouted host for the TTL only, and never a routed one", async () => {
    const hostname = uniqueHost();
    const t0 = 1_000_000;
    expect(await customHostnameRoute(env, hostname, t0)).toBeUndefined();
    const { appId, domainId } = await appWithDomain(hostname, "active", true);
    expect(await customHostnameRoute(env, hostname, t0 + UNROUTED_TTL_MS - 1)).toBeUndefined();
    expect((await customHostnameRoute(env, hostname, t0 + UNROUTED_TTL_MS))?.id).toBe(appId);
    await database(env).delete(customDomains).where(eq(customDomains.id, domainId));
    expect(await customHostnameRoute(env, hostname, t0 + UNROUTED_TTL_MS + 1)).toBeUndefined();
  });

  it("routes two accounts' hostnames, asked in turn and in different spellings, each to its own app", async () => {
    const [a, b] = [uniqueHost(), uniqueHost()];
    const [appA, appB] = [(await appWithDomain(a, "active", true)).appId, (await appWithDomain(b, "active", true)).appId];
    const asked = [a, b, `${a.toUpperCase()}:8787`, `${a}.`, b, ` ${b} `, a];
    const routed = await Promise.all(asked.map(async (host) => (await customHostnameRoute(env, host))?.id));
    expect(routed).toEqual([appA, appB, appA, appA, appB, appB, appA]);
  });

  it("does not look up names that cannot be custom domains", async () => {
    for (const host of ["localhost", "127.0.0.1:8787", "[::1]:8787", ""]) expect(await customHostnameRoute(env, host)).toBeUndefined();
  });
});
