/**
 * Billing end to end (issue 13, "Must show"): a real `wrangler dev`, the machine's dockerd and the
 * dev forge. Money comes in through the operator route; the app's first deploy is charged once,
 * redeploy and restart charge nothing, a stop moves the period's end by the time stopped, and a
 * wallet that cannot cover the first month gets 402 with its ledger unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppJson, type AppsStack, creditAccount, curlApp, deployAndWait, httpdApp, repository, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

interface BilledApp extends AppJson {
  billing: { charged: boolean; price: number | null; next_price: number; period_start: string | null; period_end: string | null; stopped_since: string | null };
}
interface Wallet {
  balance: number;
  currency: string;
  entries: { kind: string; amount: number; app_id: string | null; description: string }[];
}

let stack: AppsStack;
const sessions: ConsoleSession[] = [];
const run = Date.now() % 100000;

beforeAll(async () => {
  stack = await startAppsStack();
});

afterAll(async () => {
  for (const session of sessions) {
    const { apps } = await session.call<{ apps: AppJson[] }>("GET", "/console/api/apps").catch(() => ({ apps: [] as AppJson[] }));
    for (const app of apps) await session.call("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  }
  await stack?.stop();
});

async function account(credit: number): Promise<{ session: ConsoleSession; email: string }> {
  const email = `billing-${run}-${sessions.length}@example.com`;
  const session = await signedUp(stack.worker.url, { email, credit: 0 });
  sessions.push(session);
  if (credit > 0) await creditAccount(stack.worker.url, email, credit, "Bank transfer");
  return { session, email };
}

/** A GET answered with text (a log, a page), with the session's cookie. */
const raw = (session: ConsoleSession, path: string) =>
  fetch(stack.worker.url + path, { headers: { Origin: stack.worker.url, Cookie: (session as unknown as { cookie: string }).cookie } });
const wallet = (session: ConsoleSession) => session.call<Wallet>("GET", "/console/api/wallet");
const getApp = (session: ConsoleSession, id: string) => session.call<BilledApp>("GET", `/console/api/apps/${id}`);

describe("billing on a real engine", () => {
  it("charges the first deploy once; redeploy and restart charge nothing; a stop moves the period end by the time stopped", async () => {
    const { session } = await account(2000);
    expect(await wallet(session)).toMatchObject({ balance: 2000, currency: "DA", entries: [{ kind: "credit", amount: 2000, description: "Bank transfer" }] });
    const repo = await repository(stack, `billed-${run}`, httpdApp("<h1>billed</h1>", { port: 8080 }));
    const app = await session.call<BilledApp>("POST", "/console/api/apps", { name: "Billed", repository: repo, subdomain: `billed-${run}` });
    expect(app.billing).toMatchObject({ charged: false, next_price: 1200, period_end: null });

    const live = (await deployAndWait(session, app.id)) as BilledApp;
    expect(live.status).toBe("running");
    expect(live.billing).toMatchObject({ charged: true, price: 1200 });
    expect((await wallet(session)).balance).toBe(800);

    expect(((await deployAndWait(session, app.id)) as BilledApp).status).toBe("running");
    await session.call("POST", `/console/api/apps/${app.id}/restart`);
    const afterRestart = await getApp(session, app.id);
    expect(afterRestart.billing).toEqual(live.billing);
    const w = await wallet(session);
    expect(w.balance).toBe(800);
    expect(w.entries.filter((e) => e.kind === "charge")).toEqual([expect.objectContaining({ amount: -1200, app_id: app.id })]);

    const stopped = await session.call<BilledApp>("POST", `/console/api/apps/${app.id}/stop`);
    expect(stopped.billing.stopped_since).not.toBeNull();
    await new Promise((r) => setTimeout(r, 2500));
    const started = await session.call<BilledApp>("POST", `/console/api/apps/${app.id}/start`);
    const startedAt = Date.now();
    expect(started.status).toBe("running");
    expect(started.billing.period_start).toBe(live.billing.period_start);
    expect(started.billing.stopped_since).toBeNull();
    const moved = Date.parse(started.billing.period_end!) - Date.parse(live.billing.period_end!);
    // Exactly the time stopped, as the Worker's clock measured it: at least our wait, at most until the reply.
    expect(moved).toBeGreaterThanOrEqual(2500);
    expect(moved).toBeLessThanOrEqual(startedAt - Date.parse(stopped.billing.stopped_since!));
    expect((await wallet(session)).balance).toBe(800);
  });

  it("Deploy on a stopped app builds and keeps it stopped; Start runs the new version; billing moved only by the time stopped", async () => {
    const { session } = await account(2000);
    const repo = await repository(stack, `paused-${run}`, httpdApp("<h1>v1</h1>", { port: 8080 }));
    const app = await session.call<BilledApp>("POST", "/console/api/apps", { name: "Paused", repository: repo, subdomain: `paused-${run}` });
    const live = (await deployAndWait(session, app.id)) as BilledApp;
    expect((await curlApp(stack, app.subdomain)).body).toContain("v1");
    const stopped = await session.call<BilledApp>("POST", `/console/api/apps/${app.id}/stop`);
    expect(stopped.status).toBe("stopped");

    await repository(stack, `paused-${run}`, httpdApp("<h1>v2</h1>", { port: 8080 }));
    const built = (await deployAndWait(session, app.id)) as BilledApp;
    expect(built).toMatchObject({ status: "stopped", latest_deploy: { status: "live" } });
    expect(built.billing).toEqual(stopped.billing);
    expect((await curlApp(stack, app.subdomain)).status).toBe(503);
    const log = await raw(session, `/console/api/apps/${app.id}/deploys/${built.latest_deploy!.id}/log`);
    expect(await log.text()).toContain("Built. The app stays stopped; Start runs this version.");
    const page = await raw(session, `/console/apps/${app.id}`);
    expect(await page.text()).toContain("Built. The app stays stopped; Start runs this version.");
    expect((await wallet(session)).balance).toBe(800);

    const started = await session.call<BilledApp>("POST", `/console/api/apps/${app.id}/start`);
    const startedAt = Date.now();
    expect(started.status).toBe("running");
    expect((await curlApp(stack, app.subdomain)).body).toContain("v2");
    // Rule 4: the period's start stays; its end moved by exactly the time stopped; nothing charged.
    expect(started.billing.period_start).toBe(live.billing.period_start);
    expect(started.billing.stopped_since).toBeNull();
    const moved = Date.parse(started.billing.period_end!) - Date.parse(live.billing.period_end!);
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThanOrEqual(startedAt - Date.parse(stopped.billing.stopped_since!));
    const w = await wallet(session);
    expect(w.balance).toBe(800);
    expect(w.entries.filter((e) => e.kind === "charge")).toHaveLength(1);
  });

  it("refuses a first deploy the wallet cannot cover with 402 and leaves the ledger as it was", async () => {
    const { session } = await account(500);
    const repo = await repository(stack, `poor-${run}`, httpdApp("<h1>poor</h1>", { port: 8080 }));
    const app = await session.call<BilledApp>("POST", "/console/api/apps", { name: "Poor", repository: repo, subdomain: `poor-${run}` });
    const before = await wallet(session);
    const res = await fetch(`${stack.worker.url}/console/api/apps/${app.id}/deploy`, {
      method: "POST",
      headers: { Origin: stack.worker.url, Cookie: (session as unknown as { cookie: string }).cookie },
    });
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({
      success: false,
      code: "INSUFFICIENT_FUNDS",
      error: "Your wallet holds 500 DA; the first month of the Lite plan costs 1,200 DA.",
    });
    expect(await wallet(session)).toEqual(before);
    expect(await getApp(session, app.id)).toMatchObject({ status: "not_deployed", latest_deploy: null, deploy_in_progress: false, billing: { charged: false } });
  });
});
