/**
 * Custom domains with HOSTNAME_PROVIDER=cloudflare, end to end: a real `wrangler dev` whose
 * DomainChecker talks to the test double of Cloudflare's custom hostnames API
 * (test/fakes/fake-cloudflare.ts) over HTTP, the DoH stand-in for DNS and dockerd for the app.
 * The double is moved along as Cloudflare would move a hostname (pending -> active, certificate
 * pending_validation -> active); an API error shows as the domain's Error reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_CLOUDFLARE_TOKEN, FAKE_CLOUDFLARE_ZONE, startFakeCloudflare } from "../fakes/fake-cloudflare";
import { type AppJson, type AppsStack, deployAndWait, httpdApp, repository, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

interface DomainJson {
  hostname: string;
  status: string;
  reason: string | null;
  https: boolean;
  last_checked_at: string | null;
  next_check_at: string | null;
}

let cloudflare: Awaited<ReturnType<typeof startFakeCloudflare>>;
let stack: AppsStack;
let session: ConsoleSession;
let app: AppJson;

beforeAll(async () => {
  cloudflare = await startFakeCloudflare();
  stack = await startAppsStack({
    DOMAIN_RECHECK_SECONDS: "2",
    HOSTNAME_PROVIDER: "cloudflare",
    CLOUDFLARE_API_URL: cloudflare.url,
    CLOUDFLARE_ZONE_ID: FAKE_CLOUDFLARE_ZONE,
    CLOUDFLARE_API_TOKEN: FAKE_CLOUDFLARE_TOKEN,
  });
  session = await signedUp(stack.worker.url);
  const repo = await repository(stack, "saas", httpdApp("<h1>saas</h1>"));
  app = await session.call<AppJson>("POST", "/console/api/apps", { name: "SaaS", repository: repo, subdomain: `saas-${Date.now() % 100000}`, plan: "pro" });
  expect((await deployAndWait(session, app.id)).status).toBe("running");
});

afterAll(async () => {
  if (app) await session.call("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  await stack?.stop();
  await cloudflare?.close();
});

const control = (path: string, body: unknown) => fetch(`${cloudflare.url}/__control/${path}`, { method: "PUT", body: JSON.stringify(body) });
const domain = async (hostname: string) => (await session.call<{ domains: DomainJson[] }>("GET", `/console/api/apps/${app.id}/domains`)).domains.find((d) => d.hostname === hostname)!;

async function until(hostname: string, done: (d: DomainJson) => boolean, timeoutMs = 60_000): Promise<DomainJson> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await domain(hostname);
    if (done(d)) return d;
    if (Date.now() > deadline) throw new Error(`${hostname} still ${JSON.stringify(d)} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("custom domains through the cloudflare provider", () => {
  it("creates the custom hostname once DNS points, is Active when Cloudflare routes it, and HTTPS once the certificate is active", async () => {
    const hostname = "shop.saas.test";
    await session.call("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    stack.dns.set(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost` }]);
    expect(await until(hostname, (d) => d.status === "Verifying…")).toMatchObject({ https: false, reason: null });
    // Created at Cloudflare: the double knows it now.
    expect((await control(hostname, { ssl: "pending_validation" })).status).toBe(200);

    await control(hostname, { status: "active" });
    const active = await until(hostname, (d) => d.status === "Active");
    expect(active.https).toBe(false);

    await control(hostname, { ssl: "active" });
    const secured = await until(hostname, (d) => d.https);
    expect(secured).toMatchObject({ status: "Active" });
    // From now on it is re-checked at the Active pace (DOMAIN_ACTIVE_RECHECK_SECONDS, 3600).
    expect(Date.parse(secured.next_check_at!) - Date.parse(secured.last_checked_at!)).toBe(3600_000);

    await session.call("DELETE", `/console/api/apps/${app.id}/domains/${hostname}`);
    expect((await control(hostname, {})).status).toBe(404);
  });

  it("asks Cloudflare nothing while DNS does not name the app (one API quota for the whole service)", async () => {
    const hostname = "unproven.saas.test";
    await session.call("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    stack.dns.set(hostname, [{ type: "CNAME", data: "someone-else.example.test" }]);
    const failed = await session.call<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${hostname}/verify`);
    expect(failed).toMatchObject({ status: "Error", reason: `${hostname}: found CNAME someone-else.example.test; expected a CNAME to ${app.subdomain}.localhost` });
    // The double never heard of it.
    expect((await control(hostname, {})).status).toBe(404);
    await session.call("DELETE", `/console/api/apps/${app.id}/domains/${hostname}`);
  });

  it("shows a Cloudflare API error as the domain's Error reason", async () => {
    const hostname = "broken.saas.test";
    await session.call("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    await control("fail-next", { status: 400, code: 1411, message: "Custom hostname does not resolve to this zone." });
    stack.dns.set(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost` }]);
    const failed = await session.call<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${hostname}/verify`);
    expect(failed).toMatchObject({ status: "Error", reason: "Cloudflare API error 1411: Custom hostname does not resolve to this zone." });
    // The next check asks again and gets through.
    expect((await until(hostname, (d) => d.status !== "Error")).status).toBe("Verifying…");
  });
});
