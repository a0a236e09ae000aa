import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { appController } from "../../src/apps/app-controller";
import type { ConsoleClient } from "./helpers";
import { creditAccount, uniqueEmail } from "./helpers";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Issue 13, SPEC.md App controls "Billing effects" 1-6 and the renewal, through the AppController
// and the console JSON routes, with the clock moved by calling the controller with `now`. The
// engine is the fake Docker Engine (RUNTIME_URL), the forge a stand-in.

const DAY = 24 * 60 * 60 * 1000;
let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

interface Billing {
  charged: boolean;
  price: number | null;
  next_price: number;
  period_start: string | null;
  period_end: string | null;
  stopped_since: string | null;
  payment_due: boolean;
}
type BilledApp = AppJson & { billing: Billing; name: string };
interface Entry {
  id: string;
  amount: number;
  kind: "credit" | "charge";
  app_id: string | null;
  app_name: string | null;
  period_start: string | null;
  period_end: string | null;
  description: string;
}
interface Wallet {
  balance: number;
  currency: string;
  entries: Entry[];
}

async function newApp(client: ConsoleClient, name = "Web", subdomain = unique("bill")): Promise<BilledApp> {
  const repository = await publishRepository(unique("repo"), httpdFiles("<p>billed</p>"));
  return client.json<BilledApp>("POST", "/console/api/apps", { name, repository, subdomain });
}

const wallet = (client: ConsoleClient) => client.json<Wallet>("GET", "/console/api/wallet");
const getApp = (client: ConsoleClient, id: string) => client.json<BilledApp>("GET", `/console/api/apps/${id}`);
const charges = (w: Wallet, appId: string) => w.entries.filter((e) => e.kind === "charge" && e.app_id === appId);

/** The ledger invariant: the balance is the sum of the entries. */
function expectBalanced(w: Wallet): void {
  expect(w.balance).toBe(w.entries.reduce((sum, e) => sum + e.amount, 0));
}

async function deployed(client: ConsoleClient, app: BilledApp): Promise<BilledApp> {
  const res = await client.call("POST", `/console/api/apps/${app.id}/deploy`);
  expect(res.status).toBe(202);
  await waitForDeploy(client, app.id);
  return getApp(client, app.id);
}

describe("billing through the AppController", () => {
  it("rule 1: a first deploy the wallet cannot cover is refused with 402 and moves no money", async () => {
    const email = uniqueEmail();
    const client = await signedUpClient({ email, credit: 1000 });
    const app = await newApp(client);
    const before = await wallet(client);
    const res = await client.call("POST", `/console/api/apps/${app.id}/deploy`);
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({
      success: false,
      code: "INSUFFICIENT_FUNDS",
      error: "Your wallet holds 1,000 DA; the first month of the Lite plan costs 1,200 DA.",
    });
    expect(await wallet(client)).toEqual(before);
    const after = await getApp(client, app.id);
    expect(after).toMatchObject({ status: "not_deployed", deploy_in_progress: false, latest_deploy: null, billing: { charged: false, period_end: null } });
    // Nothing is left in flight: with the money in, the same press deploys and is charged.
    await creditAccount(email, 200);
    const live = await deployed(client, app);
    expect(live.billing).toMatchObject({ charged: true, price: 1200 });
    expect((await wallet(client)).balance).toBe(0);
  });

  it("rule 1: the first deploy charges the full price once, for one calendar month; rule 2: redeploy and restart charge nothing", async () => {
    const client = await signedUpClient({ credit: 5000 });
    const app = await newApp(client, "Shop");
    const live = await deployed(client, app);
    expect(live.billing).toMatchObject({ charged: true, price: 1200, next_price: 1200, stopped_since: null, payment_due: false });
    const start = Date.parse(live.billing.period_start!);
    const end = new Date(start);
    end.setUTCMonth(end.getUTCMonth() + 1);
    if (end.getUTCDate() !== new Date(start).getUTCDate()) end.setUTCDate(0);
    expect(Date.parse(live.billing.period_end!)).toBe(end.getTime());

    await deployed(client, app);
    expect((await client.call("POST", `/console/api/apps/${app.id}/restart`)).status).toBe(200);
    const w = await wallet(client);
    expect(w.balance).toBe(3800);
    expect(charges(w, app.id)).toEqual([
      expect.objectContaining({ amount: -1200, app_name: "Shop", period_start: live.billing.period_start, period_end: live.billing.period_end, description: "First month of the Lite plan" }),
    ]);
    expectBalanced(w);
    expect((await getApp(client, app.id)).billing).toEqual(live.billing);
  });

  it("two concurrent first deploys of one app charge once; two apps racing for one month's money charge one", async () => {
    const client = await signedUpClient({ credit: 1500 });
    const app = await newApp(client);
    const replies = await Promise.all([1, 2, 3].map(() => client.call("POST", `/console/api/apps/${app.id}/deploy`)));
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202]);
    await waitForDeploy(client, app.id);
    expect(charges(await wallet(client), app.id)).toHaveLength(1);

    const other = await signedUpClient({ credit: 1200 });
    const [a, b] = [await newApp(other), await newApp(other)];
    const raced = await Promise.all([a, b].map((x) => other.call("POST", `/console/api/apps/${x.id}/deploy`)));
    expect(raced.map((r) => r.status).sort()).toEqual([202, 402]);
    const w = await wallet(other);
    expect(w.balance).toBe(0);
    expect(w.entries.filter((e) => e.kind === "charge")).toHaveLength(1);
    expectBalanced(w);
    for (const x of [a, b]) await waitForDeploy(other, x.id);
    // No entry without the change it pays for: the charged app is the one that deployed.
    const charged = w.entries.find((e) => e.kind === "charge")!;
    const paid = await getApp(other, charged.app_id!);
    expect(paid.billing.period_start).toBe(charged.period_start);
    const unpaid = await getApp(other, charged.app_id === a.id ? b.id : a.id);
    expect(unpaid).toMatchObject({ status: "not_deployed", latest_deploy: null, billing: { charged: false } });
  });

  it("rules 3-4: stopped for exactly 3 days, the period end moves by exactly 3 days and its start does not", async () => {
    const client = await signedUpClient();
    const app = await deployed(client, await newApp(client));
    const controller = appController(env, app.id);
    const stoppedAt = Date.now() + 1234;
    expect(await controller.stop({ appId: app.id, now: stoppedAt })).toEqual({ outcome: "done" });
    const stopped = await getApp(client, app.id);
    expect(stopped.billing.stopped_since).toBe(new Date(stoppedAt).toISOString());
    // Rule 3: no renewal while stopped, even long past the period's end.
    await controller.tick(Date.parse(app.billing.period_end!) + 10 * DAY);
    expect(charges(await wallet(client), app.id)).toHaveLength(1);
    expect(await controller.start({ appId: app.id, now: stoppedAt + 3 * DAY })).toEqual({ outcome: "done" });
    const started = await getApp(client, app.id);
    expect(started.billing.period_start).toBe(app.billing.period_start);
    expect(Date.parse(started.billing.period_end!) - Date.parse(app.billing.period_end!)).toBe(3 * DAY);
    expect(started.billing.stopped_since).toBeNull();
    expect(charges(await wallet(client), app.id)).toHaveLength(1);
  });

  it("rule 4: an app never charged has no period to move", async () => {
    const client = await signedUpClient();
    const app = await newApp(client);
    expect((await getApp(client, app.id)).billing).toEqual({
      charged: false,
      price: null,
      next_price: 1200,
      period_start: null,
      period_end: null,
      stopped_since: null,
      payment_due: false,
    });
  });

  it("rule 5 and renewal: a plan change charges nothing now; the renewal charges the new price once, however often the alarm fires", async () => {
    const client = await signedUpClient();
    const app = await deployed(client, await newApp(client, "Api"));
    const before = await wallet(client);
    expect((await client.json<BilledApp>("POST", `/console/api/apps/${app.id}/plan`, { plan: "starter" })).billing).toMatchObject({ price: 1200, next_price: 2500 });
    expect((await wallet(client)).balance).toBe(before.balance);

    const controller = appController(env, app.id);
    const end = Date.parse(app.billing.period_end!);
    await controller.tick(end - 1);
    expect(charges(await wallet(client), app.id)).toHaveLength(1);
    await controller.tick(end + 5);
    await controller.tick(end + 5);
    await controller.tick(end + 60_000);
    const w = await wallet(client);
    const renewal = charges(w, app.id);
    expect(renewal).toHaveLength(2);
    expect(renewal[0]).toMatchObject({ amount: -2500, period_start: new Date(end).toISOString(), description: "Renewal of the Starter plan" });
    expect(w.balance).toBe(before.balance - 2500);
    expectBalanced(w);
    const renewed = await getApp(client, app.id);
    expect(renewed.billing).toMatchObject({ price: 2500, period_start: new Date(end).toISOString(), period_end: renewal[0]!.period_end });
  });

  it("renewal without funds stops the app with payment due; Start is refused until credit arrives, then charges a fresh period from then", async () => {
    const email = uniqueEmail();
    const client = await signedUpClient({ email, credit: 1200 });
    const app = await deployed(client, await newApp(client));
    const controller = appController(env, app.id);
    const end = Date.parse(app.billing.period_end!);
    await controller.tick(end + 1);
    const due = await getApp(client, app.id);
    expect(due).toMatchObject({ status: "stopped", billing: { payment_due: true, stopped_since: new Date(end + 1).toISOString() } });
    expect(charges(await wallet(client), app.id)).toHaveLength(1);

    const later = end + 2 * DAY;
    expect(await controller.start({ appId: app.id, now: later })).toEqual({
      outcome: "refused",
      code: "INSUFFICIENT_FUNDS",
      message: "Your wallet holds 0 DA; a month of the Lite plan costs 1,200 DA.",
    });
    expect((await getApp(client, app.id)).status).toBe("stopped");
    await creditAccount(email, 1200);
    expect(await controller.start({ appId: app.id, now: later })).toEqual({ outcome: "done" });
    const back = await getApp(client, app.id);
    expect(back).toMatchObject({ status: "running", billing: { payment_due: false, stopped_since: null, period_start: new Date(later).toISOString() } });
    const w = await wallet(client);
    expect(charges(w, app.id)).toHaveLength(2);
    expect(w.balance).toBe(0);
    expectBalanced(w);
  });

  it("rule 6: delete refunds nothing; a re-created app with the same name and subdomain is charged in full at its first deploy", async () => {
    const client = await signedUpClient({ credit: 3000 });
    const subdomain = unique("again");
    const first = await deployed(client, await newApp(client, "Blog", subdomain));
    expect((await client.call("DELETE", `/console/api/apps/${first.id}`)).status).toBe(200);
    const afterDelete = await wallet(client);
    expect(afterDelete.balance).toBe(1800);
    expect(charges(afterDelete, first.id)).toHaveLength(1);
    const second = await deployed(client, await newApp(client, "Blog", subdomain));
    expect(second.billing).toMatchObject({ charged: true, price: 1200 });
    const w = await wallet(client);
    expect(w.balance).toBe(600);
    expect(charges(w, second.id)).toHaveLength(1);
    expectBalanced(w);
  });

  it("shows the wallet newest first and refuses operator calls without the operator token", async () => {
    const email = uniqueEmail();
    const client = await signedUpClient({ email, credit: 0 });
    expect(await wallet(client)).toEqual({ balance: 0, currency: "DA", entries: [] });
    await creditAccount(email, 500, "Welcome");
    await creditAccount(email, 700, "Top-up");
    const w = await wallet(client);
    expect(w.entries.map((e) => [e.amount, e.description])).toEqual([
      [700, "Top-up"],
      [500, "Welcome"],
    ]);
    expect(w.balance).toBe(1200);
  });
});
