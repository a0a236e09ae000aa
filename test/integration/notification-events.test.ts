import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { HealthRecord } from "../../src/apps/health";
import { appController } from "../../src/apps/app-controller";
import { getApp } from "../../src/apps/store";
import { NO_WATCH, type InstanceLook, type WatchState, watchSample } from "../../src/notifications/app-watch";
import { notifyDomain, notifyHealth } from "../../src/notifications/hooks";
import { watchWallets } from "../../src/notifications/wallet-watch";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { type ConsoleClient, creditAccount } from "./helpers";

// Where alerts are raised (docs/alerts.md, "Events"): a deploy going live or failing (through the
// deploy queue and the app's controller), the health checks' unhealthy and recovered, the
// metrics object's crash, memory and error samples, a custom domain that served moving to error,
// and the cron's wallet check. Each incident reaches the stand-in receiver once, signed.

interface Received {
  json: { event: string; app: { id: string; name: string } | null; details: Record<string, unknown> };
  verified: boolean | null;
}

let n = 0;
const unique = (name: string) => `${name}-${Date.now() % 100000}-${++n}`;
const MIN = 60_000;

async function received(inbox: string): Promise<Received[]> {
  return ((await (await fetch(`${env.RECEIVER_URL}/__control/${inbox}`)).json()) as { received: Received[] }).received;
}
async function until<T>(what: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await what();
    if (done(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}
/** Events delivered to the inbox once the queue has had time to send everything raised. */
async function settled(inbox: string, count: number): Promise<string[]> {
  const got = await until(() => received(inbox), (r) => r.length >= count);
  await new Promise((r) => setTimeout(r, 1500));
  const all = await received(inbox);
  expect(all.every((r) => r.verified === true)).toBe(true);
  return all.map((r) => r.json.event);
}

async function channel(client: ConsoleClient, events: string[]): Promise<string> {
  const inbox = unique("events");
  const made = await client.json<{ secret: string }>("POST", "/console/api/notifications/channels", { kind: "webhook", url: `${env.RECEIVER_URL}/hooks/${inbox}`, events });
  await fetch(`${env.RECEIVER_URL}/__control/${inbox}`, { method: "PUT", body: JSON.stringify({ secret: made.secret }) });
  return inbox;
}

async function deployedApp(client: ConsoleClient, files = httpdFiles("<p>alerts</p>")): Promise<AppJson> {
  const repository = await publishRepository(unique("alerts"), files);
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Alerted", repository, subdomain: unique("alerted") });
  expect((await client.call("POST", `/console/api/apps/${app.id}/deploy`)).status).toBe(202);
  return waitForDeploy(client, app.id);
}

const look = (over: Partial<InstanceLook>): InstanceLook => ({
  now: Date.now(),
  instanceId: "i1",
  state: "running",
  restarts: 0,
  exitCode: null,
  oomKilled: false,
  memoryBytes: 10,
  memoryLimitBytes: 1000,
  minutes: [],
  ...over,
});

describe("alert events", { timeout: 90_000 }, () => {
  it("a deploy that goes live sends deploy.live, one that fails sends deploy.failed with its message", async () => {
    const client = await signedUpClient();
    const inbox = await channel(client, ["deploy.live", "deploy.failed"]);
    const live = await deployedApp(client);
    expect(live.latest_deploy?.status).toBe("live");
    const failed = await deployedApp(client, { "README.md": "no build file here" });
    expect(failed.latest_deploy?.status).toBe("failed");
    expect(await settled(inbox, 2)).toEqual(["deploy.live", "deploy.failed"]);
    const [first, second] = await received(inbox);
    expect(first!.json).toMatchObject({ app: { id: live.id, name: "Alerted" }, details: { deploy_id: live.latest_deploy!.id } });
    expect(second!.json).toMatchObject({ app: { id: failed.id }, details: { deploy_id: failed.latest_deploy!.id, failure_kind: "build_file_missing", message: expect.stringContaining("Nothing to build") } });
  });

  it("samples: one app.crashed per crash incident, memory high after 5 minutes, 5xx above 5 % of 20 requests", async () => {
    const client = await signedUpClient();
    const inbox = await channel(client, ["app.crashed", "app.memory_high", "app.errors_high"]);
    const app = (await getApp(env, (await deployedApp(client)).id))!;
    const t0 = Date.now();
    let state: WatchState = NO_WATCH;
    const at = (ms: number, over: Partial<InstanceLook>) => look({ now: t0 + ms, ...over });
    for (const sample of [
      at(0, {}),
      at(15_000, { restarts: 1 }), // the engine restarted the process: crashed
      at(30_000, { restarts: 2, state: "restarting" }), // the same incident
      at(45_000, { restarts: 2 }),
      at(11 * MIN, { restarts: 2 }), // ten quiet minutes: closed
      at(12 * MIN, { restarts: 3 }), // a new crash
      at(13 * MIN, { restarts: 3, memoryBytes: 950 }),
      at(18 * MIN, { restarts: 3, memoryBytes: 950 }), // 5 minutes above 90 %
      at(19 * MIN, { restarts: 3, memoryBytes: 960, minutes: [{ at: Math.floor((t0 + 19 * MIN) / 60_000) * 60, total: 20, errors: 2 }] }),
    ]) {
      state = await watchSample(env, app, state, sample);
    }
    expect(await settled(inbox, 4)).toEqual(["app.crashed", "app.crashed", "app.memory_high", "app.errors_high"]);
    expect((await received(inbox))[0]!.json.details).toMatchObject({ instance_state: "running", restarts: 1, message: expect.stringContaining("crashed") });
  });

  it("health: app.unhealthy once while it stays unhealthy, app.recovered when it is healthy again", async () => {
    const client = await signedUpClient();
    const inbox = await channel(client, ["app.unhealthy", "app.recovered"]);
    const app = (await getApp(env, (await deployedApp(client)).id))!;
    const record = (state: HealthRecord["state"], failures: number): HealthRecord => ({ instanceId: "i1", since: 0, failures, state, lastFailure: failures ? { at: 1, message: "/ answered HTTP 500 (expected 2xx-3xx)." } : null });
    const steps: [HealthRecord | null, HealthRecord][] = [
      [null, record("healthy", 0)],
      [record("healthy", 0), record("healthy", 2)],
      [record("healthy", 2), record("unhealthy", 3)],
      [record("unhealthy", 3), record("unhealthy", 4)],
      [record("unhealthy", 4), record("healthy", 0)],
      [record("healthy", 0), record("healthy", 0)],
    ];
    for (const [i, [before, after]] of steps.entries()) await notifyHealth(env, app, before, after, Date.now() + i);
    expect(await settled(inbox, 2)).toEqual(["app.unhealthy", "app.recovered"]);
    expect((await received(inbox))[0]!.json.details).toMatchObject({ message: "/ answered HTTP 500 (expected 2xx-3xx).", failures: 3 });
  });

  it("a custom domain that served moving to error sends domain.error once; a claim waiting for DNS does not", async () => {
    const client = await signedUpClient();
    const inbox = await channel(client, ["domain.error"]);
    const app = (await getApp(env, (await deployedApp(client)).id))!;
    const domain = { id: crypto.randomUUID(), hostname: "shop.example.com" };
    await notifyDomain(env, app, { ...domain, status: "pending_dns" }, "error", "shop.example.com has no CNAME record.", Date.now());
    await notifyDomain(env, app, { ...domain, status: "active" }, "error", "shop.example.com no longer points here.", Date.now() + 1);
    await notifyDomain(env, app, { ...domain, status: "verifying" }, "error", "again", Date.now() + 2);
    await notifyDomain(env, app, { ...domain, status: "error" }, "active", null, Date.now() + 3);
    await notifyDomain(env, app, { ...domain, status: "active" }, "error", "and again", Date.now() + 4);
    expect(await settled(inbox, 2)).toEqual(["domain.error", "domain.error"]);
    expect((await received(inbox))[0]!.json.details).toMatchObject({ hostname: "shop.example.com", previous_status: "active", message: "shop.example.com no longer points here." });
  });

  it("a renewal the wallet does not cover stops the app and sends renewal.failed once", async () => {
    const client = await signedUpClient({ credit: 1200 });
    const inbox = await channel(client, ["renewal.failed"]);
    const app = await deployedApp(client);
    const end = (await getApp(env, app.id))!.periodEnd!;
    await appController(env, app.id).tick(end + 1);
    await appController(env, app.id).tick(end + 2);
    expect(await settled(inbox, 1)).toEqual(["renewal.failed"]);
    expect((await received(inbox))[0]!.json).toMatchObject({
      app: { id: app.id },
      details: { price: 1200, currency: "DA", period_end: new Date(end).toISOString(), message: expect.stringContaining("the app was stopped") },
    });
  });

  it("the cron's wallet check: wallet.low once while the balance is below the renewals due within 7 days, again after credit ran out anew", async () => {
    const email = `wallet-${unique("w")}@example.com`;
    // Exactly the lite plan's first period: the balance is 0 after the first deploy.
    const client = await signedUpClient({ credit: 1200, email });
    const inbox = await channel(client, ["wallet.low"]);
    const app = await deployedApp(client);
    const now = Date.now();
    await watchWallets(env, now);
    // The renewal is a month out: nothing is due within 7 days.
    await new Promise((r) => setTimeout(r, 1000));
    expect(await received(inbox)).toEqual([]);
    await env.DB.prepare("UPDATE apps SET period_end = ? WHERE id = ?").bind(now + 3 * 86_400_000, app.id).run();
    await watchWallets(env, now);
    await watchWallets(env, now + 1);
    await creditAccount(email, 1200);
    await watchWallets(env, now + 2); // covered: closed
    await env.DB.prepare("UPDATE apps SET plan = 'pro' WHERE id = ?").bind(app.id).run();
    await watchWallets(env, now + 3); // the renewal now costs 6000 DA: low again
    expect(await settled(inbox, 2)).toEqual(["wallet.low", "wallet.low"]);
    const [first, second] = await received(inbox);
    expect(first!.json).toMatchObject({ app: null, details: { balance: 0, due: 1200, currency: "DA", renewals: 1 } });
    expect(second!.json.details).toMatchObject({ balance: 1200, due: 6000 });
  });
});
