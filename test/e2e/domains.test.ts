/**
 * Custom domains end to end (issue 15, "Must show"): a real `wrangler dev` with its Durable Object
 * alarms, the machine's dockerd running the app, and the DoH stand-in answering the Worker's DNS
 * checks. DOMAIN_RECHECK_SECONDS is shortened to 2 so a re-check comes quickly; waits are generous.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppJson, type AppsStack, deployAndWait, httpdApp, repository, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

interface DomainJson {
  hostname: string;
  status: string;
  reason: string | null;
  dns_record: { type: string; name: string; target: string };
  last_checked_at: string | null;
  next_check_at: string | null;
  https: boolean;
}

let stack: AppsStack;
let session: ConsoleSession;
let app: AppJson;

beforeAll(async () => {
  stack = await startAppsStack({ DOMAIN_RECHECK_SECONDS: "2" });
  session = await signedUp(stack.worker.url);
  const repo = await repository(stack, "storefront", httpdApp("<h1>storefront</h1>"));
  app = await session.call<AppJson>("POST", "/console/api/apps", { name: "Storefront", repository: repo, subdomain: `store-${Date.now() % 100000}`, plan: "starter" });
  const live = await deployAndWait(session, app.id);
  expect(live.status, JSON.stringify(live.latest_deploy)).toBe("running");
});

afterAll(async () => {
  if (app) await session.call("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  await stack?.stop();
});

/** curl with a Host header, as the issue asks: `curl -H 'Host: shop.example.test' http://localhost:<port>/`. */
async function curlHost(host: string): Promise<{ status: number; body: string }> {
  const { stdout } = await promisify(execFile)("curl", ["-sS", "-H", `Host: ${host}`, "-w", "\n%{http_code}", `http://localhost:${stack.worker.port}/`]);
  const cut = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

const domain = async (hostname: string) =>
  (await session.call<{ domains: DomainJson[] }>("GET", `/console/api/apps/${app.id}/domains`)).domains.find((d) => d.hostname === hostname);

/** Polls until `done` holds (generous bound), returning every status seen on the way. */
async function watch(hostname: string, done: (d: DomainJson) => boolean, timeoutMs = 60_000): Promise<{ last: DomainJson; seen: string[] }> {
  const seen: string[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = (await domain(hostname))!;
    if (seen[seen.length - 1] !== d.status) seen.push(d.status);
    if (done(d)) return { last: d, seen };
    if (Date.now() > deadline) throw new Error(`${hostname} still ${d.status} after ${timeoutMs / 1000} s (seen ${seen.join(" -> ")})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("custom domains on wrangler dev, dockerd and the DoH stand-in", () => {
  const hostname = "shop.example.test";

  it("adds a domain to a running Starter app: Pending DNS, re-checked while the record is missing", async () => {
    const added = await session.call<DomainJson>("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    expect(added).toMatchObject({ hostname, status: "Pending DNS", dns_record: { type: "CNAME", name: hostname, target: `${app.subdomain}.localhost` } });
    const { last } = await watch(hostname, (d) => d.last_checked_at !== null);
    expect(last.status).toBe("Pending DNS");
    expect(Date.parse(last.next_check_at!) - Date.parse(last.last_checked_at!)).toBe(2000);
    expect((await curlHost(hostname)).status).toBe(404);
  });

  it("the record appears: within one re-check Verifying…, then Active, and curl with the Host header reaches the app", async () => {
    stack.dns.set(hostname, [{ type: "CNAME", data: `${app.subdomain}.localhost` }]);
    const { last, seen } = await watch(hostname, (d) => d.status === "Active");
    const order = ["Pending DNS", "Verifying…", "Active"];
    expect(seen.map((s) => order.indexOf(s))).toEqual([...seen.map((s) => order.indexOf(s))].sort());
    expect(seen).not.toContain("Error");
    expect(last).toMatchObject({ reason: null, https: false });
    // Active domains go on being re-checked, hourly by default.
    expect(Date.parse(last.next_check_at!) - Date.parse(last.last_checked_at!)).toBe(3600_000);

    // Hosts found routing nowhere are remembered for a few seconds per isolate: allow for that.
    const deadline = Date.now() + 15_000;
    let reply = await curlHost(hostname);
    while (reply.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      reply = await curlHost(hostname);
    }
    expect(reply).toEqual({ status: 200, body: "<h1>storefront</h1>" });
  });

  it("Verify now before the record exists gives Error with what was found and expected", async () => {
    const early = "early.example.test";
    await session.call("POST", `/console/api/apps/${app.id}/domains`, { hostname: early });
    const checked = await session.call<DomainJson>("POST", `/console/api/apps/${app.id}/domains/${early}/verify`);
    expect(checked).toMatchObject({ status: "Error", reason: `${early} has no CNAME record; expected a CNAME to ${app.subdomain}.localhost` });
    stack.dns.set(early, [{ type: "A", data: "203.0.113.7" }]);
    const { last } = await watch(early, (d) => d.reason?.includes("found A") === true);
    expect(last).toMatchObject({ status: "Error", reason: `${early}: found A 203.0.113.7; expected a CNAME to ${app.subdomain}.localhost` });
    await session.call("DELETE", `/console/api/apps/${app.id}/domains/${early}`);
  });

  it("removal: the hostname answers 404 while the app's own hostname still serves", async () => {
    expect(await session.call("DELETE", `/console/api/apps/${app.id}/domains/${hostname}`)).toEqual({ success: true });
    expect((await curlHost(hostname)).status).toBe(404);
    expect(await curlHost(`${app.subdomain}.localhost`)).toEqual({ status: 200, body: "<h1>storefront</h1>" });
    expect((await session.call<{ domains: DomainJson[] }>("GET", `/console/api/apps/${app.id}/domains`)).domains).toEqual([]);
  });
});
