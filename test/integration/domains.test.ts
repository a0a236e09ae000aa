import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getDomain } from "../../src/domains/store";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { setDns, uniqueHost } from "./domain-helpers";
import type { ConsoleClient } from "./helpers";

// Issue 15, "Must show" (Workers tests): custom domains on Durable Object alarms with the DoH
// stand-in at its HTTP boundary. SPEC.md States "Custom domain" and Limits "Custom domains",
// "Domain re-check interval" (45 seconds while waiting).

interface DomainJson {
  hostname: string;
  status: string;
  reason: string | null;
  dns_record: { type: string; name: string; target: string };
  verification: { type: "TXT"; name: string; value: string };
  last_checked_at: string | null;
  next_check_at: string | null;
  https: boolean;
  created_at: string;
}

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

/** A signed-up client with a running app on `plan`. */
async function runningApp(plan = "starter"): Promise<{ client: ConsoleClient; app: AppJson }> {
  const client = await signedUpClient();
  const repository = await publishRepository(unique("site"), httpdFiles("<p>shop</p>"));
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Shop", repository, subdomain: unique("shop"), plan });
  await client.json("POST", `/console/api/apps/${app.id}/deploy`);
  expect((await waitForDeploy(client, app.id)).status).toBe("running");
  return { client, app };
}

async function checkerOf(appId: string, hostname: string) {
  const row = await getDomain(env, appId, hostname);
  if (!row) throw new Error(`no domain ${hostname}`);
  return env.DOMAIN_CHECKER.get(env.DOMAIN_CHECKER.idFromName(row.id));
}

const alarmOf = async (stub: DurableObjectStub) => runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
const domains = (client: ConsoleClient, appId: string) => client.json<{ domains: DomainJson[] }>("GET", `/console/api/apps/${appId}/domains`);
const one = async (client: ConsoleClient, appId: string, hostname: string) => (await domains(client, appId)).domains.find((d) => d.hostname === hostname)!;
const seconds = (from: string | null, to: string | null) => (Date.parse(to!) - Date.parse(from!)) / 1000;
/** Moves the clock on (Verify now allows one press per 10 s per domain). */
const later = (ms: number) => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() + ms);
};
afterEach(() => void vi.useRealTimers());

// Each test deploys an app on the fake engine first; a plan change drains the old instance (2 s).
describe("custom domains on alarms", { timeout: 30_000 }, () => {
  it("starts Pending DNS with the record to create, checked 45 s after it was added", async () => {
    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    const res = await client.call("POST", `/console/api/apps/${app.id}/domains`, { hostname: hostname.toUpperCase() });
    expect(res.status).toBe(201);
    const domain = (await res.json()) as DomainJson;
    expect(domain).toMatchObject({
      hostname,
      status: "Pending DNS",
      reason: null,
      dns_record: { type: "CNAME", name: hostname, target: `${app.subdomain}.localhost` },
      verification: { type: "TXT", name: `_cp-challenge.${hostname}`, value: expect.stringMatching(/^[0-9a-f]{32}$/) },
      last_checked_at: null,
      https: false,
    });
    expect(seconds(domain.created_at, domain.next_check_at)).toBe(45);
    expect(await alarmOf(await checkerOf(app.id, hostname))).toBe(Date.parse(domain.next_check_at!));
  });

  it("re-checks every 45 s while the record is missing, then Verifying… with the route, then Active", async () => {
    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    const checker = await checkerOf(app.id, hostname);

    expect(await runDurableObjectAlarm(checker)).toBe(true);
    const waiting = await one(client, app.id, hostname);
    expect(waiting).toMatchObject({ status: "Pending DNS", reason: null });
    expect(seconds(waiting.last_checked_at, waiting.next_check_at)).toBe(45);
    expect(await alarmOf(checker)).toBe(Date.parse(waiting.next_check_at!));

    await setDns(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost.` }]);
    expect(await runDurableObjectAlarm(checker)).toBe(true);
    const verifying = await one(client, app.id, hostname);
    expect(verifying.status).toBe("Verifying…");
    expect(seconds(verifying.last_checked_at, verifying.next_check_at)).toBeLessThanOrEqual(5);

    expect(await runDurableObjectAlarm(checker)).toBe(true);
    const active = await one(client, app.id, hostname);
    expect(active).toMatchObject({ status: "Active", reason: null, https: false });
    // Active domains go on being re-checked, every DOMAIN_ACTIVE_RECHECK_SECONDS (3600).
    expect(seconds(active.last_checked_at, active.next_check_at)).toBe(3600);
    expect(await alarmOf(checker)).toBe(Date.parse(active.next_check_at!));
  });

  it("Verify now before the record has spread gives Error with what was found and expected; a later re-check recovers", async () => {
    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    const failed = await client.json<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${hostname}/verify`);
    expect(failed).toMatchObject({ status: "Error", reason: `${hostname} has no CNAME record; expected a CNAME to ${app.subdomain}.localhost` });
    expect(seconds(failed.last_checked_at, failed.next_check_at)).toBe(45);

    await setDns(hostname, [{ type: "A", data: "203.0.113.7" }]);
    const checker = await checkerOf(app.id, hostname);
    await runDurableObjectAlarm(checker);
    expect(await one(client, app.id, hostname)).toMatchObject({ status: "Error", reason: `${hostname}: found A 203.0.113.7; expected a CNAME to ${app.subdomain}.localhost` });

    await setDns(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost` }]);
    await runDurableObjectAlarm(checker);
    expect(await one(client, app.id, hostname)).toMatchObject({ status: "Verifying…", reason: null });
  });

  it("Verify now retries an Error domain at once", async () => {
    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    expect((await client.json<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${hostname}/verify`)).status).toBe("Error");
    await setDns(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost` }]);
    later(10_000);
    expect((await client.json<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${hostname}/verify`)).status).toBe("Verifying…");
  });

  it("Verify now on a Verifying… domain takes its next step at once; on an Active one it re-checks and it stays Active", async () => {
    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    await setDns(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost` }]);
    const verifying = await client.json<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${hostname}/verify`);
    expect(verifying.status).toBe("Verifying…");
    later(10_000);
    const active = await client.json<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${hostname}/verify`);
    expect(active).toMatchObject({ status: "Active" });
    expect(seconds(active.last_checked_at, active.next_check_at)).toBe(3600);
    later(10_000);
    const again = await client.json<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${hostname}/verify`);
    expect(again).toMatchObject({ status: "Active", reason: null, https: false });
    expect(seconds(active.last_checked_at, again.last_checked_at)).toBeGreaterThanOrEqual(10);
  });

  it("shows a resolver failure as an Error reason, and the check goes on", async () => {
    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    await setDns(hostname, { fail: "SERVFAIL" });
    const checker = await checkerOf(app.id, hostname);
    await runDurableObjectAlarm(checker);
    expect(await one(client, app.id, hostname)).toMatchObject({ status: "Error", reason: `DNS lookup failed: the resolver answered SERVFAIL for ${hostname}` });
    expect(await alarmOf(checker)).not.toBeNull();
  });

  it("removal cancels the alarm and the app is unaffected", async () => {
    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    const checker = await checkerOf(app.id, hostname);
    expect(await alarmOf(checker)).not.toBeNull();
    expect(await client.json("DELETE", `/console/api/apps/${app.id}/domains/${hostname}`)).toEqual({ success: true });
    expect(await alarmOf(checker)).toBeNull();
    expect(await runDurableObjectAlarm(checker)).toBe(false);
    expect((await domains(client, app.id)).domains).toEqual([]);
    expect((await client.json<AppJson>("GET", `/console/api/apps/${app.id}`)).status).toBe("running");
    const again = await client.call("DELETE", `/console/api/apps/${app.id}/domains/${hostname}`);
    expect(again.status).toBe(404);
  });

  it("keeps the limit of 3 under concurrent adds", async () => {
    const { client, app } = await runningApp("pro");
    const hosts = Array.from({ length: 8 }, () => uniqueHost("many"));
    const replies = await Promise.all(hosts.map((hostname) => client.call("POST", `/console/api/apps/${app.id}/domains`, { hostname })));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    for (const reply of replies.filter((r) => r.status === 409)) {
      expect(await reply.json()).toEqual({ success: false, code: "DOMAIN_LIMIT", error: "An app can have up to 3 custom domains." });
    }
    expect((await domains(client, app.id)).domains).toHaveLength(3);
  });

  it("refuses a plan without custom domains, an app not running, a hostname another app holds and bad hostnames", async () => {
    const lite = await runningApp("lite");
    const refused = await lite.client.call("POST", `/console/api/apps/${lite.app.id}/domains`, { hostname: uniqueHost() });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ success: false, code: "PLAN_REQUIRED", error: "Custom domains are available on the Starter plan and above." });

    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    // Held only once its DNS verified it (a pending claim locks nothing: domain-claims.test.ts).
    await setDns(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost` }]);
    expect((await client.json<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${hostname}/verify`)).status).toBe("Verifying…");
    const taken = await lite.client.call("POST", `/console/api/apps/${lite.app.id}/plan`, { plan: "starter" }).then(() =>
      lite.client.call("POST", `/console/api/apps/${lite.app.id}/domains`, { hostname }),
    );
    expect(taken.status).toBe(409);
    const body = (await taken.json()) as { code: string; error: string };
    expect(body.code).toBe("DOMAIN_TAKEN");
    expect(body.error).not.toContain(app.id);

    const missing = await client.call("POST", `/console/api/apps/${app.id}/domains`, {});
    expect(await missing.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: "hostname: Enter a hostname such as shop.example.com." });
    for (const [input, error] of [
      ["https://shop.example.com/", "hostname: Enter a hostname only, such as shop.example.com: no scheme, path, port or spaces."],
      [`${app.subdomain}.localhost`, "hostname: Hostnames under localhost belong to the service and cannot be added as custom domains."],
      ["admin.control.test", "hostname: Hostnames under control.test belong to the service and cannot be added as custom domains."],
    ]) {
      const res = await client.call("POST", `/console/api/apps/${app.id}/domains`, { hostname: input });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ success: false, code: "INVALID_REQUEST", error });
    }

    await client.json("POST", `/console/api/apps/${app.id}/stop`);
    const stopped = await client.call("POST", `/console/api/apps/${app.id}/domains`, { hostname: uniqueHost() });
    expect(stopped.status).toBe(409);
    expect(((await stopped.json()) as { code: string }).code).toBe("APP_NOT_RUNNING");
  });

  it("refuses moving an app with custom domains to Lite, naming them; after removal the change goes through", async () => {
    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    const res = await client.call("POST", `/console/api/apps/${app.id}/plan`, { plan: "lite" });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ success: false, code: "PLAN_REQUIRED", error: `The Lite plan has no custom domains. Remove this custom domain first: ${hostname}.` });
    await client.json("DELETE", `/console/api/apps/${app.id}/domains/${hostname}`);
    expect((await client.json<AppJson>("POST", `/console/api/apps/${app.id}/plan`, { plan: "lite" })).plan).toBe("lite");
  });

  it("deleting the app removes its domains and cancels their alarms", async () => {
    const { client, app } = await runningApp();
    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    const checker = await checkerOf(app.id, hostname);
    expect(await client.json("DELETE", `/console/api/apps/${app.id}`)).toEqual({ success: true });
    expect(await getDomain(env, app.id, hostname)).toBeUndefined();
    expect(await alarmOf(checker)).toBeNull();
  });

  it("answers 404 for another account's app and for a hostname not on the app", async () => {
    const { client, app } = await runningApp();
    const stranger = await signedUpClient();
    expect((await stranger.call("GET", `/console/api/apps/${app.id}/domains`)).status).toBe(404);
    expect((await stranger.call("POST", `/console/api/apps/${app.id}/domains`, { hostname: uniqueHost() })).status).toBe(404);
    expect((await client.call("POST", `/console/api/apps/${app.id}/domains/nowhere.example.test/verify`)).status).toBe(404);
  });
});
