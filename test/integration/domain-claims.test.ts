import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports as workerExports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LOST_REASON } from "../../src/domains/claims";
import { wakeOverdueDomains } from "../../src/domains/service";
import { getDomain, updateDomain } from "../../src/domains/store";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { clearDns, setDns, uniqueHost } from "./domain-helpers";
import type { ConsoleClient } from "./helpers";

// A hostname goes to whoever its DNS names, never to whoever asked first: pending claims lock
// nothing, a CNAME to an app's hostname names that app alone, the shared addresses need the claim's
// TXT record, the first verified claim wins, waiting claims expire, Active ones are re-checked, and
// Verify now is rate-limited. The DoH stand-in is DNS; the clock is moved with fake Date.
// (vitest.config.ts: CUSTOM_DOMAIN_ADDRESSES=192.0.2.80 is the service's shared address.)

const SHARED_ADDRESS = "192.0.2.80";

interface DomainJson {
  hostname: string;
  status: string;
  reason: string | null;
  verification: { type: "TXT"; name: string; value: string };
  next_check_at: string | null;
  last_checked_at: string | null;
}

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

async function runningApp(marker: string): Promise<{ client: ConsoleClient; app: AppJson }> {
  const client = await signedUpClient();
  const repository = await publishRepository(unique("claim"), httpdFiles(`<p>${marker}</p>`));
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: marker, repository, subdomain: unique(marker), plan: "starter" });
  await client.json("POST", `/console/api/apps/${app.id}/deploy`);
  expect((await waitForDeploy(client, app.id)).status).toBe("running");
  return { client, app };
}

const add = (client: ConsoleClient, appId: string, hostname: string) => client.call("POST", `/console/api/apps/${appId}/domains`, { hostname });
const one = async (client: ConsoleClient, appId: string, hostname: string) =>
  (await client.json<{ domains: DomainJson[] }>("GET", `/console/api/apps/${appId}/domains`)).domains.find((d) => d.hostname === hostname);
const verify = (client: ConsoleClient, appId: string, hostname: string) => client.call("POST", `/console/api/apps/${appId}/domains/${hostname}/verify`);
const checkerOf = async (appId: string, hostname: string) => env.DOMAIN_CHECKER.get(env.DOMAIN_CHECKER.idFromName((await getDomain(env, appId, hostname))!.id));
const alarmOf = async (stub: DurableObjectStub) => runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
const get = (host: string) => workerExports.default.fetch(new Request(`http://${host}/`, { headers: { Host: host } }));

/** Moves the clock on by `ms` (fake Date in this isolate: the Worker, its objects and the test). */
const later = (ms: number) => {
  const now = Date.now();
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(now + ms);
};
afterEach(() => void vi.useRealTimers());

describe("custom domain claims", { timeout: 60_000 }, () => {
  it("two accounts claim one name; the CNAME to one app's hostname verifies that app only, and the other claim loses", async () => {
    const a = await runningApp("alpha");
    const b = await runningApp("beta");
    const hostname = uniqueHost("both");
    // A pending claim locks nothing: both accounts may claim the name.
    expect((await add(a.client, a.app.id, hostname)).status).toBe(201);
    expect((await add(b.client, b.app.id, hostname)).status).toBe(201);

    await setDns(hostname, [{ type: "CNAME", data: `${a.app.subdomain}.localhost` }]);
    // The CNAME names alpha: beta's check finds it pointing elsewhere.
    await runDurableObjectAlarm(await checkerOf(b.app.id, hostname));
    expect(await one(b.client, b.app.id, hostname)).toMatchObject({ status: "Pending DNS" });
    const bVerify = (await (await verify(b.client, b.app.id, hostname)).json()) as DomainJson;
    expect(bVerify).toMatchObject({ status: "Error", reason: `${hostname}: found CNAME ${a.app.subdomain}.localhost; expected a CNAME to ${b.app.subdomain}.localhost` });

    const aVerify = (await (await verify(a.client, a.app.id, hostname)).json()) as DomainJson;
    expect(aVerify.status).toBe("Verifying…");
    // The first verified claim wins: the other goes Error and is no longer re-checked.
    const lost = await one(b.client, b.app.id, hostname);
    expect(lost).toMatchObject({ status: "Error", reason: LOST_REASON, next_check_at: null });
    const bChecker = await checkerOf(b.app.id, hostname);
    await runDurableObjectAlarm(bChecker);
    expect(await one(b.client, b.app.id, hostname)).toMatchObject({ status: "Error", reason: LOST_REASON, next_check_at: null, last_checked_at: lost!.last_checked_at });
    // Its alarm is only its expiry, 7 days after it started waiting.
    expect((await alarmOf(bChecker))! - Date.now()).toBeGreaterThan(6 * 86_400_000);

    await runDurableObjectAlarm(await checkerOf(a.app.id, hostname));
    expect(await one(a.client, a.app.id, hostname)).toMatchObject({ status: "Active" });
    expect(await (await get(hostname)).text()).toBe("<p>alpha</p>");
    // Now that alpha holds it, a third claim is refused.
    const c = await runningApp("gamma");
    const refused = await add(c.client, c.app.id, hostname);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { code: string }).code).toBe("DOMAIN_TAKEN");
  });

  it("the shared addresses without a TXT record stay unverified; the right TXT verifies that claim only", async () => {
    const a = await runningApp("owner");
    const b = await runningApp("squatter");
    const hostname = uniqueHost("apex").replace(/\.example\.test$/, ".test"); // an apex name: A records
    await add(b.client, b.app.id, hostname);
    await add(a.client, a.app.id, hostname);
    await setDns(hostname, [{ type: "A", data: SHARED_ADDRESS }]);

    for (const side of [a, b]) {
      const checked = (await (await verify(side.client, side.app.id, hostname)).json()) as DomainJson;
      expect(checked).toMatchObject({
        status: "Error",
        reason: `${hostname} points to the service, but no TXT record proves which app: add a TXT record at _cp-challenge.${hostname} holding this domain's verification value`,
      });
    }
    const owner = (await one(a.client, a.app.id, hostname))!;
    const squatter = (await one(b.client, b.app.id, hostname))!;
    expect(owner.verification.name).toBe(`_cp-challenge.${hostname}`);
    expect(owner.verification.value).not.toBe(squatter.verification.value);

    await setDns(`_cp-challenge.${hostname}`, [{ type: "TXT", data: owner.verification.value }]);
    // The squatter's check sees a TXT that is not its own.
    await runDurableObjectAlarm(await checkerOf(b.app.id, hostname));
    expect(await one(b.client, b.app.id, hostname)).toMatchObject({
      status: "Error",
      reason: `${hostname} points to the service, but the TXT record at _cp-challenge.${hostname} does not hold this domain's verification value`,
    });
    await runDurableObjectAlarm(await checkerOf(a.app.id, hostname));
    expect(await one(a.client, a.app.id, hostname)).toMatchObject({ status: "Verifying…" });
    expect(await one(b.client, b.app.id, hostname)).toMatchObject({ status: "Error", reason: LOST_REASON, next_check_at: null });
    expect(await (await get(hostname)).text()).toBe("<p>owner</p>");
  });

  it("a CNAME to another app's hostname never verifies this claim, even with its TXT", async () => {
    const a = await runningApp("named");
    const b = await runningApp("other");
    const hostname = uniqueHost("via");
    await add(b.client, b.app.id, hostname);
    const token = (await one(b.client, b.app.id, hostname))!.verification.value;
    await setDns(hostname, [{ type: "CNAME", data: `${a.app.subdomain}.localhost` }]);
    await setDns(`${a.app.subdomain}.localhost`, [{ type: "A", data: SHARED_ADDRESS }]);
    await setDns(`_cp-challenge.${hostname}`, [{ type: "TXT", data: token }]);
    await runDurableObjectAlarm(await checkerOf(b.app.id, hostname));
    expect(await one(b.client, b.app.id, hostname)).toMatchObject({ status: "Pending DNS" });
    await clearDns(`${a.app.subdomain}.localhost`);
  });

  it("a claim left waiting DOMAIN_CLAIM_DAYS is removed, with a note on the app page", async () => {
    const { client, app } = await runningApp("expiring");
    const hostname = uniqueHost("stale");
    await add(client, app.id, hostname);
    const checker = await checkerOf(app.id, hostname);

    later(6 * 86_400_000);
    await runDurableObjectAlarm(checker);
    expect((await getDomain(env, app.id, hostname))?.status).toBe("pending_dns");

    later(86_400_000);
    await runDurableObjectAlarm(checker);
    expect(await getDomain(env, app.id, hostname)).toBeUndefined();
    expect(await alarmOf(checker)).toBeNull();
    // Back to the real clock, where the session is still valid: the page notes the removal.
    vi.useRealTimers();
    expect(await one(client, app.id, hostname)).toBeUndefined();
    const page = await (await client.call("GET", `/console/apps/${app.id}/domains`)).text();
    expect(page).toContain(`${hostname} was removed: its DNS did not verify it for this app within 7 days.`);
  });

  it("an Active domain whose CNAME is removed goes Error at its next re-check and stops being served", async () => {
    const { client, app } = await runningApp("dangling");
    const hostname = uniqueHost("gone");
    await add(client, app.id, hostname);
    await setDns(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost` }]);
    const checker = await checkerOf(app.id, hostname);
    await runDurableObjectAlarm(checker);
    await runDurableObjectAlarm(checker);
    const active = (await one(client, app.id, hostname))!;
    expect(active.status).toBe("Active");
    expect(await (await get(hostname)).text()).toBe("<p>dangling</p>");

    // Another account, signed up before the clock moves (sign-ups are rate-limited on the real clock).
    const other = await runningApp("taker");
    await clearDns(hostname);
    later(3600_000);
    expect(await alarmOf(checker)).toBe(Date.parse(active.next_check_at!));
    await runDurableObjectAlarm(checker);
    expect(await one(client, app.id, hostname)).toMatchObject({ status: "Error", reason: `${hostname} has no CNAME record; expected a CNAME to ${app.subdomain}.localhost` });
    const res = await get(hostname);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("dangling");
    // Once no app holds it, another account may claim it (and verify it only with its own DNS).
    vi.useRealTimers();
    expect((await add(other.client, other.app.id, hostname)).status).toBe(201);
  });

  it("the scheduled sweep wakes a domain whose check is overdue (an Active domain from before Active re-checks)", async () => {
    const { client, app } = await runningApp("legacy");
    const hostname = uniqueHost("legacy");
    await add(client, app.id, hostname);
    await setDns(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost` }]);
    const checker = await checkerOf(app.id, hostname);
    await runDurableObjectAlarm(checker);
    await runDurableObjectAlarm(checker);
    // As the migration leaves such a domain: no alarm, its re-check due.
    await runInDurableObject(checker, (_instance, state) => state.storage.deleteAlarm());
    const row = (await getDomain(env, app.id, hostname))!;
    const checkedBefore = (await one(client, app.id, hostname))!.last_checked_at;
    await updateDomain(env, row.id, { nextCheckAt: Date.now() - 11 * 60_000 });
    expect(await wakeOverdueDomains(env, Date.now())).toBeGreaterThanOrEqual(1);
    // Its alarm is due at once (it may already be running on its own): the re-check happens.
    await runDurableObjectAlarm(checker);
    await expect.poll(async () => (await one(client, app.id, hostname))!.last_checked_at, { timeout: 10_000 }).not.toBe(checkedBefore);
    const checked = (await one(client, app.id, hostname))!;
    expect(checked.status).toBe("Active");
    expect((Date.parse(checked.next_check_at!) - Date.parse(checked.last_checked_at!)) / 1000).toBe(3600);
  });

  it("Verify now answers 429 RATE_LIMIT_EXCEEDED with Retry-After on the 2nd press within 10 s", async () => {
    const { client, app } = await runningApp("presser");
    const hostname = uniqueHost("press");
    await add(client, app.id, hostname);
    expect((await verify(client, app.id, hostname)).status).toBe(200);
    later(5000);
    const second = await verify(client, app.id, hostname);
    expect(second.status).toBe(429);
    expect(second.headers.get("Retry-After")).toBe("5");
    expect(await second.json()).toEqual({ success: false, code: "RATE_LIMIT_EXCEEDED", error: "Verify now was pressed too often. Wait 5 seconds before pressing it again." });
    later(5000);
    expect((await verify(client, app.id, hostname)).status).toBe(200);
  });

  it("Verify now allows 30 presses an hour per account, across its domains", async () => {
    const client = await signedUpClient();
    const apps: AppJson[] = [];
    const hosts: [string, string][] = [];
    const repository = await publishRepository(unique("many"), httpdFiles("<p>many</p>"));
    for (let i = 0; i < 2; i++) {
      const app = await client.json<AppJson>("POST", "/console/api/apps", { name: `Many ${i}`, repository, plan: "pro" });
      await client.json("POST", `/console/api/apps/${app.id}/deploy`);
      await waitForDeploy(client, app.id);
      apps.push(app);
      for (let j = 0; j < 3; j++) {
        const hostname = uniqueHost("many");
        await add(client, app.id, hostname);
        hosts.push([app.id, hostname]);
      }
    }
    let passed = 0;
    for (let round = 0; round < 6; round++) {
      for (const [appId, hostname] of hosts) if ((await verify(client, appId, hostname)).status === 200) passed++;
      later(10_000);
    }
    // 36 presses within a minute, each domain's 10 s apart: the account's 30 pass, the rest wait.
    expect(passed).toBe(30);
    const refused = await verify(client, hosts[0]![0], hosts[0]![1]);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
  });
});
