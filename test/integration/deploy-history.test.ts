import { env, exports as workerExports } from "cloudflare:workers";
import { packTar } from "modern-tar";
import { describe, expect, it, vi } from "vitest";
import { appController } from "../../src/apps/app-controller";
import { appImageRepository } from "../../src/apps/launch";
import { getApp } from "../../src/apps/store";
import type { DeployView } from "../../src/apps/views";
import { addOneMonth } from "../../src/billing/period";
import { DockerRuntime } from "../../src/runtime";
import { ROUTE_TTL_MS } from "../../src/routing/route-cache";
import type { ConsoleClient } from "./helpers";
import { type AppJson, httpdFiles, publishCommit, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Deploy history and rollback: each deploy records its commit (the forge's archive folder or its
// API), image digest, plan and env version, and `kind`; the images of the last 5 live deploys are
// kept; `POST .../deploys/{deploy_id}/rollback` runs a kept image again with the current
// variables through the launch-and-switch: no rebuild, no charge, under the change mark. The
// engine is the fake Docker Engine at its HTTP boundary, the forge a stand-in.

const DAY = 24 * 60 * 60 * 1000;
const SHA1 = "1111111111111111111111111111111111111111";
const SHA2 = "2222222222222222222222222222222222222222";
let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;
const runtime = () => new DockerRuntime({ url: env.RUNTIME_URL });

/** A deploy as the JSON routes give it (src/apps/store.ts). */
type DeployJson = DeployView;

const page = async (subdomain: string) => {
  const res = await workerExports.default.fetch(new Request(`http://${subdomain}.localhost/`));
  return [res.status, await res.text()] as const;
};
const history = async (client: ConsoleClient, appId: string) => (await client.json<{ deploys: DeployJson[] }>("GET", `/console/api/apps/${appId}/deploys`)).deploys;
const balance = async (client: ConsoleClient) => (await client.json<{ balance: number }>("GET", "/console/api/wallet")).balance;

/** An app deployed once per page, each deploy of a new archive; deploys listed newest first. */
async function deployedApp(pages: string[], options: { client?: ConsoleClient } = {}) {
  const client = options.client ?? (await signedUpClient());
  const name = unique("hist");
  const repository = await publishRepository(name, httpdFiles(pages[0]!));
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "History", repository, subdomain: unique("hist") });
  for (const [i, text] of pages.entries()) {
    if (i > 0) await publishRepository(name, httpdFiles(text));
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    expect(await waitForDeploy(client, app.id)).toMatchObject({ status: "running", latest_deploy: { status: "live" } });
  }
  return { client, app, name };
}

/** Until the saved variable set is applied to the serving instance. */
async function waitForEnv(client: ConsoleClient, appId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const app = await client.json<{ env: { applying: boolean; applied_version: number; version: number } }>("GET", `/console/api/apps/${appId}`);
    if (!app.env.applying && app.env.applied_version === app.env.version) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("variables not applied");
}

/** Rollback pressed; a CHANGE_IN_FLIGHT left by the change before (a drain still running) is tried again, as the message says. */
async function rollback(client: ConsoleClient, appId: string, deployId: string) {
  for (let i = 0; ; i++) {
    const res = await client.call("POST", `/console/api/apps/${appId}/deploys/${deployId}/rollback`);
    const body = (await res.json()) as { deploy: DeployJson } & { code?: string; error?: string };
    if (body.code !== "CHANGE_IN_FLIGHT" || i >= 50) return { status: res.status, body };
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("what a deploy records", () => {
  it("the commit from the forge's API (Gitea), the image digest, the plan, the env version and kind deploy", async () => {
    const client = await signedUpClient();
    const name = unique("rec");
    const repository = await publishRepository(name, httpdFiles("<p>one</p>"));
    await publishCommit(name, { sha: SHA1, message: "Add the first page\n\nWith a body." });
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Rec", repository, subdomain: unique("rec") });
    await client.json("PUT", `/console/api/apps/${app.id}/env`, { version: 0, variables: [{ key: "GREETING", value: "hi" }] });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    const live = await waitForDeploy(client, app.id);
    const row = (await getApp(env, app.id))!;
    const digest = await runtime().imageDigest(row.image!);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const expected = {
      status: "live",
      kind: "deploy",
      commit: { sha: SHA1, message: "Add the first page\n\nWith a body." },
      image_digest: digest,
      plan: "lite",
      env_version: 1,
      rollback_of: null,
      rollback_available: false,
    };
    expect(live.latest_deploy).toMatchObject(expected);
    expect(await history(client, app.id)).toMatchObject([expected]);
    const log = await (await client.call("GET", `/console/api/apps/${app.id}/deploys/${live.latest_deploy!.id}/log`)).text();
    expect(log).toContain(`==> Commit ${SHA1.slice(0, 12)}: Add the first page`);
    await client.call("DELETE", `/console/api/apps/${app.id}`);
  });

  it("the archive folder's SHA wins over an API that names another commit (a push between the two): no message then", async () => {
    const client = await signedUpClient();
    const name = unique("gh");
    const repository = await publishRepository(name, httpdFiles("<p>gh</p>"), "main", { topFolder: `${name}-${SHA2}` });
    await publishCommit(name, { sha: SHA1, message: "A newer push" });
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "GH", repository, subdomain: unique("gh") });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    expect((await waitForDeploy(client, app.id)).latest_deploy).toMatchObject({ commit: { sha: SHA2, message: "" } });
    await client.call("DELETE", `/console/api/apps/${app.id}`);
  });

  it("a forge that says nothing about the commit leaves it null; the deploy goes live all the same", async () => {
    const { client, app } = await deployedApp(["<p>quiet</p>"]);
    const [only] = await history(client, app.id);
    expect(only).toMatchObject({ status: "live", commit: null, kind: "deploy" });
    expect(only!.image_digest).toMatch(/^sha256:/);
    await client.call("DELETE", `/console/api/apps/${app.id}`);
  });
});

describe("rollback", () => {
  it("serves the earlier image again with the current variables: 202 {deploy} kind rollback, no build, no charge", async () => {
    const { client, app } = await deployedApp(["<p>v1</p>", "<p>v2</p>"]);
    const [v2, v1] = await history(client, app.id);
    expect(v1).toMatchObject({ status: "superseded", rollback_available: true });
    expect(v2).toMatchObject({ status: "live", rollback_available: false });
    expect(await page(app.subdomain)).toEqual([200, "<p>v2</p>"]);
    const images = (await runtime().images(appImageRepository(app.id))).sort();
    expect(images).toHaveLength(2);
    await client.json("PUT", `/console/api/apps/${app.id}/env`, { version: 0, variables: [{ key: "MODE", value: "after" }] });
    await waitForEnv(client, app.id);
    const before = await balance(client);

    const { status, body } = await rollback(client, app.id, v1!.id);
    expect(status).toBe(202);
    expect(body.deploy).toMatchObject({ kind: "rollback", rollback_of: v1!.id, image_digest: v1!.image_digest, status: "starting" });
    const done = await waitForDeploy(client, app.id);
    expect(done.latest_deploy).toMatchObject({ id: body.deploy.id, kind: "rollback", status: "live", env_version: 1, plan: "lite" });
    // The proxy may answer from the route it remembered for up to ROUTE_TTL_MS (the old instance
    // still drains meanwhile); after that the hostname serves the rolled-back image.
    await vi.waitFor(async () => expect(await page(app.subdomain)).toEqual([200, "<p>v1</p>"]), { timeout: ROUTE_TTL_MS + 2000, interval: 100 });

    const row = (await getApp(env, app.id))!;
    expect(row.liveDeployId).toBe(body.deploy.id);
    const container = await runtime().inspect(row.instanceId!);
    expect(container?.image).toBe(`${appImageRepository(app.id)}:${v1!.id}`);
    // No rebuild: the engine holds the same two images, and the log says so.
    expect((await runtime().images(appImageRepository(app.id))).sort()).toEqual(images);
    const log = await (await client.call("GET", `/console/api/apps/${app.id}/deploys/${body.deploy.id}/log`)).text();
    expect(log).toContain("no rebuild");
    expect(log).not.toContain("Building");
    expect(await balance(client)).toBe(before);
    // The deploy it replaced can be rolled back to in its turn; the rollback itself is the live one.
    const after = await history(client, app.id);
    expect(after.map((d) => [d.kind, d.status, d.rollback_available])).toEqual([
      ["rollback", "live", false],
      ["deploy", "superseded", true],
      ["deploy", "superseded", true],
    ]);
    await client.call("DELETE", `/console/api/apps/${app.id}`);
  }, 60_000);

  it("the live deploy, another account's deploy, a bad id and a cross-site POST are refused; nothing is recorded", async () => {
    const { client, app } = await deployedApp(["<p>a</p>", "<p>b</p>"]);
    const other = await deployedApp(["<p>other</p>"]);
    const [live, older] = await history(client, app.id);
    const [theirs] = await history(other.client, other.app.id);

    const current = await rollback(client, app.id, live!.id);
    expect(current).toMatchObject({ status: 409, body: { success: false, code: "ROLLBACK_UNAVAILABLE", error: "This deploy is the one the app runs now." } });
    // Another account's deploy id, on my app or on theirs: 404 like a missing one.
    expect(await rollback(client, app.id, theirs!.id)).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } });
    expect(await rollback(client, other.app.id, theirs!.id)).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } });
    expect(await rollback(other.client, app.id, older!.id)).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } });
    expect(await rollback(client, app.id, "not-a-uuid")).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } });
    const forged = await client.call("POST", `/console/api/apps/${app.id}/deploys/${older!.id}/rollback`, undefined, { Origin: "https://evil.example" });
    expect(forged.status).toBe(403);
    expect(await history(client, app.id)).toHaveLength(2);
    expect(await page(app.subdomain)).toEqual([200, "<p>b</p>"]);
    await client.call("DELETE", `/console/api/apps/${app.id}`);
    await other.client.call("DELETE", `/console/api/apps/${other.app.id}`);
  }, 60_000);

  it("keeps the images of the last 5 live deploys; an older one answers 409 ROLLBACK_UNAVAILABLE; Delete removes them all", async () => {
    const { client, app } = await deployedApp(["<p>1</p>", "<p>2</p>", "<p>3</p>", "<p>4</p>", "<p>5</p>", "<p>6</p>"]);
    const deploys = await history(client, app.id);
    expect(deploys.map((d) => d.rollback_available)).toEqual([false, true, true, true, true, false]);
    const oldest = deploys[5]!;
    const kept = (await runtime().images(appImageRepository(app.id))).sort();
    expect(kept).toEqual(deploys.slice(0, 5).map((d) => `${appImageRepository(app.id)}:${d.id}`).sort());
    const refused = await rollback(client, app.id, oldest.id);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ success: false, code: "ROLLBACK_UNAVAILABLE" });
    expect(await history(client, app.id)).toHaveLength(6);

    expect((await client.call("DELETE", `/console/api/apps/${app.id}`)).status).toBe(200);
    expect(await runtime().images(appImageRepository(app.id))).toEqual([]);
  }, 120_000);

  it("an image removed behind the records' back answers 409 ROLLBACK_UNAVAILABLE and is no longer offered", async () => {
    const { client, app } = await deployedApp(["<p>x</p>", "<p>y</p>"]);
    const [, older] = await history(client, app.id);
    await runtime().removeImage(`${appImageRepository(app.id)}:${older!.id}`);
    expect((await rollback(client, app.id, older!.id)).body).toMatchObject({ code: "ROLLBACK_UNAVAILABLE" });
    expect((await history(client, app.id))[1]).toMatchObject({ id: older!.id, rollback_available: false });
    expect(await page(app.subdomain)).toEqual([200, "<p>y</p>"]);
    await client.call("DELETE", `/console/api/apps/${app.id}`);
  }, 60_000);

  it("a rollback whose instance crashes at start fails like a deploy: the old instance keeps serving, nothing is charged", async () => {
    const { client, app } = await deployedApp(["<p>steady</p>"]);
    // An earlier live deploy whose image now exits at once (as a crashing app would with today's variables).
    const crashId = crypto.randomUUID();
    const tag = `${appImageRepository(app.id)}:${crashId}`;
    const files = { Dockerfile: 'FROM scratch\nCOPY busybox /bin/busybox\nEXPOSE 8080\nCMD ["/bin/busybox", "sh", "-c", "echo boom >&2; exit 3"]\n', busybox: "fake busybox" };
    const context = await packTar(Object.entries(files).map(([name, body]) => ({ header: { name, size: new TextEncoder().encode(body).length, mode: 0o644 }, body })));
    expect((await runtime().build({ context: new Blob([context]).stream(), dockerfile: "Dockerfile", tag })).ok).toBe(true);
    await env.DB.prepare("INSERT INTO deploys (id, app_id, status, started_at, finished_at, image, port, port_source, port_reason) VALUES (?, ?, 'superseded', 1, 2, ?, 8080, 'expose', 'first EXPOSE line, 8080')")
      .bind(crashId, app.id, tag)
      .run();
    const before = (await getApp(env, app.id))!;
    const paid = await balance(client);

    const { status, body } = await rollback(client, app.id, crashId);
    expect(status).toBe(202);
    const done = await waitForDeploy(client, app.id);
    expect(done.latest_deploy).toMatchObject({ id: body.deploy.id, kind: "rollback", status: "failed", failure: { kind: "start_failed" } });
    expect(done.status).toBe("running");
    expect(await getApp(env, app.id)).toMatchObject({ instanceId: before.instanceId, liveDeployId: before.liveDeployId, image: before.image });
    expect(await page(app.subdomain)).toEqual([200, "<p>steady</p>"]);
    expect(await balance(client)).toBe(paid);
    // Its image is not removed by the failure: it is still the earlier deploy's.
    expect(await runtime().hasImage(tag)).toBe(true);
    const log = await (await client.call("GET", `/console/api/apps/${app.id}/deploys/${body.deploy.id}/log`)).text();
    expect(log).toContain("boom");
    expect(log).toContain("Rollback failed: The container could not be started");
    await client.call("DELETE", `/console/api/apps/${app.id}`);
    expect(await runtime().hasImage(tag)).toBe(false);
  }, 60_000);

  it("is refused with CHANGE_IN_FLIGHT while a deploy runs, and other controls are refused while it runs", async () => {
    const client = await signedUpClient();
    const name = unique("busy");
    const repository = await publishRepository(name, httpdFiles("<p>first</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Busy", repository, subdomain: unique("busy") });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    await publishRepository(name, httpdFiles("<p>second</p>", { buildSeconds: 2 }));
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    const [, first] = await history(client, app.id);
    const during = await client.call("POST", `/console/api/apps/${app.id}/deploys/${first!.id}/rollback`);
    expect(during.status).toBe(409);
    expect(await during.json()).toEqual({ success: false, code: "CHANGE_IN_FLIGHT", error: "Another change to this app is being applied. Try again in a moment." });
    await waitForDeploy(client, app.id);

    // Pressed together on one controller, in this order: the rollback takes the mark first.
    const controller = appController(env, app.id);
    const now = Date.now();
    const deployId = crypto.randomUUID();
    const [started, stop, saved, again] = await Promise.all([
      controller.rollback({ appId: app.id, targetId: first!.id, deployId, now }),
      controller.stop({ appId: app.id, now }),
      controller.saveEnv({ appId: app.id, version: 0, variables: [], now }),
      controller.rollback({ appId: app.id, targetId: first!.id, deployId: crypto.randomUUID(), now }),
    ]);
    expect(started).toEqual({ outcome: "started", deployId });
    expect(stop).toMatchObject({ outcome: "refused", code: "CHANGE_IN_FLIGHT" });
    expect(saved).toMatchObject({ outcome: "refused", code: "DEPLOY_IN_PROGRESS" });
    expect(again).toMatchObject({ outcome: "refused", code: "CHANGE_IN_FLIGHT" });
    expect((await waitForDeploy(client, app.id)).latest_deploy).toMatchObject({ id: deployId, status: "live" });
    expect(await page(app.subdomain)).toEqual([200, "<p>first</p>"]);
    await client.call("DELETE", `/console/api/apps/${app.id}`);
  }, 60_000);

  it("a stopped app stays stopped and charges nothing; Start then runs the rolled-back image", async () => {
    const { client, app } = await deployedApp(["<p>old</p>", "<p>new</p>"]);
    const [, older] = await history(client, app.id);
    await client.json("POST", `/console/api/apps/${app.id}/stop`);
    const before = await balance(client);
    const { status, body } = await rollback(client, app.id, older!.id);
    expect(status).toBe(202);
    expect(body.deploy).toMatchObject({ kind: "rollback", status: "live", env_version: null });
    const stopped = await client.json<AppJson>("GET", `/console/api/apps/${app.id}`);
    expect(stopped.status).toBe("stopped");
    expect((await page(app.subdomain))[0]).toBe(503);
    await client.json("POST", `/console/api/apps/${app.id}/start`);
    expect(await page(app.subdomain)).toEqual([200, "<p>old</p>"]);
    expect(await balance(client)).toBe(before);
    await client.call("DELETE", `/console/api/apps/${app.id}`);
  }, 60_000);

  it("a running app whose paid period has ended is renewed first: charged the next month, then switched", async () => {
    const { client, app } = await deployedApp(["<p>p1</p>", "<p>p2</p>"]);
    const [, older] = await history(client, app.id);
    const row = (await getApp(env, app.id))!;
    const later = row.periodEnd! + DAY;
    const before = await balance(client);
    const result = await appController(env, app.id).rollback({ appId: app.id, targetId: older!.id, deployId: crypto.randomUUID(), now: later });
    expect(result).toMatchObject({ outcome: "started" });
    await waitForDeploy(client, app.id);
    expect(await balance(client)).toBe(before - 1200);
    expect((await getApp(env, app.id))!).toMatchObject({ status: "running", periodStart: row.periodEnd, periodEnd: addOneMonth(row.periodEnd!) });
    expect(await page(app.subdomain)).toEqual([200, "<p>p1</p>"]);
    await client.call("DELETE", `/console/api/apps/${app.id}`);
  }, 60_000);

  it("without the funds for that month the app is stopped for payment due and only repointed: nothing runs unpaid", async () => {
    const client = await signedUpClient({ credit: 1200 });
    const { app } = await deployedApp(["<p>u1</p>", "<p>u2</p>"], { client });
    const [, older] = await history(client, app.id);
    const row = (await getApp(env, app.id))!;
    const result = await appController(env, app.id).rollback({ appId: app.id, targetId: older!.id, deployId: crypto.randomUUID(), now: row.periodEnd! + DAY });
    expect(result).toMatchObject({ outcome: "started" });
    const after = (await getApp(env, app.id))!;
    expect(after).toMatchObject({ status: "stopped", paymentDue: true, image: `${appImageRepository(app.id)}:${older!.id}` });
    expect(await balance(client)).toBe(0);
    expect((await page(app.subdomain))[0]).toBe(503);
    // Start asks for a fresh month it cannot pay.
    const start = await client.call("POST", `/console/api/apps/${app.id}/start`);
    expect([start.status, ((await start.json()) as { code: string }).code]).toEqual([402, "INSUFFICIENT_FUNDS"]);
    await client.call("DELETE", `/console/api/apps/${app.id}`);
  }, 60_000);
});
