/**
 * Custom domain ownership end to end: a real `wrangler dev` with its Durable Object alarms, two
 * accounts' apps on the machine's dockerd, and the DoH stand-in answering the Worker's DNS checks.
 * A hostname goes to whoever its DNS names: both accounts claim the same names; a CNAME to one
 * app's hostname serves that app only, and the shared target serves nobody until a TXT record
 * proves one claim. DOMAIN_RECHECK_SECONDS is shortened to 2 so re-checks come quickly.
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
  verification: { type: "TXT"; name: string; value: string };
  last_checked_at: string | null;
  next_check_at: string | null;
}

const TARGET = "edge.example.test";
let stack: AppsStack;
const sides: { session: ConsoleSession; app: AppJson; page: string }[] = [];

beforeAll(async () => {
  stack = await startAppsStack({ DOMAIN_RECHECK_SECONDS: "2", CUSTOM_DOMAIN_TARGET: TARGET });
  for (const name of ["owner", "claimant"]) {
    const session = await signedUp(stack.worker.url);
    const page = `<h1>${name}</h1>`;
    const repo = await repository(stack, `${name}-site`, httpdApp(page));
    const app = await session.call<AppJson>("POST", "/console/api/apps", { name, repository: repo, subdomain: `${name}-${Date.now() % 100000}`, plan: "starter" });
    const live = await deployAndWait(session, app.id);
    expect(live.status, JSON.stringify(live.latest_deploy)).toBe("running");
    sides.push({ session, app, page });
  }
});

afterAll(async () => {
  for (const { session, app } of sides) await session.call("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  await stack?.stop();
});

async function curlHost(host: string): Promise<{ status: number; body: string }> {
  const { stdout } = await promisify(execFile)("curl", ["-sS", "-H", `Host: ${host}`, "-w", "\n%{http_code}", `http://localhost:${stack.worker.port}/`]);
  const cut = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

const domain = async (side: (typeof sides)[number], hostname: string) =>
  (await side.session.call<{ domains: DomainJson[] }>("GET", `/console/api/apps/${side.app.id}/domains`)).domains.find((d) => d.hostname === hostname)!;

async function watch(side: (typeof sides)[number], hostname: string, done: (d: DomainJson) => boolean, timeoutMs = 60_000): Promise<DomainJson> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const d = await domain(side, hostname);
    if (done(d)) return d;
    if (Date.now() > deadline) throw new Error(`${hostname} still ${d.status} (${d.reason}) after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The proxy remembers hosts routing nowhere for a few seconds per isolate: allow for that. */
async function servedBy(host: string, body: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  let reply = await curlHost(host);
  while (reply.body !== body && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    reply = await curlHost(host);
  }
  expect(reply).toEqual({ status: 200, body });
}

describe("custom domain ownership on wrangler dev, dockerd and the DoH stand-in", () => {
  it("two accounts claim one name; the CNAME to the owner's app hostname serves the owner only", async () => {
    const [owner, claimant] = sides as [(typeof sides)[number], (typeof sides)[number]];
    const hostname = "both.example.test";
    // The claimant asks first: a pending claim locks nothing.
    for (const side of [claimant, owner]) expect((await side.session.call<DomainJson>("POST", `/console/api/apps/${side.app.id}/domains`, { hostname })).status).toBe("Pending DNS");
    stack.dns.set(hostname, [{ type: "CNAME", data: `${owner.app.subdomain}.localhost` }]);
    await watch(owner, hostname, (d) => d.status === "Active");
    expect(await watch(claimant, hostname, (d) => d.status === "Error")).toMatchObject({ reason: "Another app verified this hostname.", next_check_at: null });
    await servedBy(hostname, owner.page);
  });

  it("the shared target serves nobody without a TXT record; the claim whose TXT it holds is served", async () => {
    const [owner, claimant] = sides as [(typeof sides)[number], (typeof sides)[number]];
    const hostname = "shared.example.test";
    for (const side of [owner, claimant]) await side.session.call("POST", `/console/api/apps/${side.app.id}/domains`, { hostname });
    stack.dns.set(hostname, [{ type: "CNAME", data: TARGET }]);
    // Several re-checks pass: both stay unverified, and the name serves neither app.
    const checkedAt = Date.now();
    for (const side of [owner, claimant]) {
      const d = await watch(side, hostname, (x) => x.last_checked_at !== null && Date.parse(x.last_checked_at) > checkedAt + 2000);
      expect(d.status).toBe("Pending DNS");
    }
    expect((await curlHost(hostname)).status).toBe(404);

    const token = (await domain(claimant, hostname)).verification;
    expect(token.name).toBe(`_cp-challenge.${hostname}`);
    stack.dns.set(token.name, [{ type: "TXT", data: token.value }]);
    await watch(claimant, hostname, (d) => d.status === "Active");
    expect(await watch(owner, hostname, (d) => d.status === "Error")).toMatchObject({ reason: "Another app verified this hostname." });
    await servedBy(hostname, claimant.page);
  });
});
