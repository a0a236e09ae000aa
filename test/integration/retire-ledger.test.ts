import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { appController } from "../../src/apps/app-controller";
import { readDeployLog } from "../../src/apps/deploy-log";
import { RUNNER_SILENT_MS } from "../../src/apps/heartbeat";
import { APP_ID_LABEL } from "../../src/apps/launch";
import { drainRetireLedger } from "../../src/apps/retire";
import { retireRowsOf } from "../../src/apps/retire-ledger";
import { deployById, getApp } from "../../src/apps/store";
import { recordDeploy } from "../../src/apps/paid-changes";
import { getConfig } from "../../src/config";
import { database } from "../../src/db/client";
import { DockerRuntime, runtimeFor } from "../../src/runtime";
import { engineKey, heldPorts } from "../../src/runtime/ports";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// The retire ledger and the runners' heartbeats (src/apps/retire.ts, src/apps/runner-watch.ts):
// the switch writes the replaced instance's row in its own batch, the controller's alarm (here
// `tick(now)` with a moved clock) drains it, and a change whose runner died is handed on or
// ended. The engine is the fake Docker Engine at its HTTP boundary.

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;
const fake = new DockerRuntime({ url: env.RUNTIME_URL });
const labels = (appId: string) => ({ [APP_ID_LABEL]: appId });

async function runningApp(files = httpdFiles("<p>v1</p>")) {
  const client = await signedUpClient();
  const repository = await publishRepository(unique("ledger"), files);
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Ledger", repository, subdomain: unique("ledger") });
  await client.json("POST", `/console/api/apps/${app.id}/deploy`);
  expect(await waitForDeploy(client, app.id)).toMatchObject({ status: "running", latest_deploy: { status: "live" } });
  return { client, appId: app.id, controller: appController(env, app.id) };
}

describe("the retire ledger", () => {
  it("a switch writes the replaced instance's row with it; the alarm retires it only after its drain deadline, and running it twice is harmless", { timeout: 60_000 }, async () => {
    const { appId, controller } = await runningApp();
    const before = (await getApp(env, appId))!;
    const switchedAt = Date.now();
    expect(await controller.changePlan({ appId, plan: "pro", now: switchedAt })).toEqual({ outcome: "done" });
    const after = (await getApp(env, appId))!;
    expect(after.instanceId).not.toBe(before.instanceId);
    const [row, ...more] = await retireRowsOf(env, appId);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ instanceId: before.instanceId, appId, engine: before.instanceEngine, node: before.instanceNode, port: before.instancePort, image: before.image, serving: true, attempts: 0 });
    // DRAIN_SECONDS is 2 in these tests, counted from the switch.
    expect(row!.drainUntil).toBeGreaterThanOrEqual(switchedAt + 2000);
    expect(row!.drainUntil).toBeLessThanOrEqual(Date.now() + 2000);

    // As if the drain were 10 minutes (the real alarm, at the deadline, then finds nothing due yet).
    const drainUntil = row!.drainUntil + 600_000;
    await database(env).run(`UPDATE retire_ledger SET drain_until = ${drainUntil} WHERE instance_id = '${row!.instanceId}'`);
    // Before the deadline: still there, still holding its port.
    await controller.tick(drainUntil - 1);
    expect(await fake.instances(labels(appId))).toEqual(expect.arrayContaining([before.instanceId, after.instanceId]));
    expect(await retireRowsOf(env, appId)).toHaveLength(1);

    await controller.tick(drainUntil);
    expect(await fake.instances(labels(appId))).toEqual([after.instanceId]);
    expect(await retireRowsOf(env, appId)).toEqual([]);
    const ports = await heldPorts(database(env), engineKey(getConfig(env).RUNTIME_URL));
    expect(ports.filter((p) => p.appId === appId).map((p) => p.instanceId)).toEqual([after.instanceId]);

    // Again: nothing left to do, nothing else touched.
    await controller.tick(drainUntil + 1000);
    expect(await fake.instances(labels(appId))).toEqual([after.instanceId]);
    expect((await getApp(env, appId))!.instanceId).toBe(after.instanceId);
    await controller.delete({ appId, now: Date.now() });
  });

  it("an instance already gone counts as retired; an engine that does not answer keeps the row, its attempt counted, for the next alarm", { timeout: 60_000 }, async () => {
    const { appId, controller } = await runningApp();
    const before = (await getApp(env, appId))!;
    await controller.changePlan({ appId, plan: "pro", now: Date.now() });
    const [row] = await retireRowsOf(env, appId);
    // Out of the real alarm's way: the drain runs here, at the times given.
    const drainUntil = row!.drainUntil + 600_000;
    await database(env).run(`UPDATE retire_ledger SET drain_until = ${drainUntil} WHERE instance_id = '${row!.instanceId}'`);
    const down = new DockerRuntime({ url: "http://127.0.0.1:1" });
    expect(await drainRetireLedger(env, appId, down, drainUntil - 1, 1)).toEqual({ retired: 0, failed: 0, waiting: 1 });
    expect(await drainRetireLedger(env, appId, down, drainUntil, 1)).toEqual({ retired: 0, failed: 1, waiting: 0 });
    expect(await retireRowsOf(env, appId)).toMatchObject([{ instanceId: before.instanceId, attempts: 1 }]);
    expect(await fake.instances(labels(appId))).toContain(before.instanceId);

    // Removed behind the ledger's back meanwhile: the next run finds it gone and deletes the row.
    await fake.remove(before.instanceId!);
    expect(await drainRetireLedger(env, appId, runtimeFor(env), drainUntil, 1)).toEqual({ retired: 1, failed: 0, waiting: 0 });
    expect(await retireRowsOf(env, appId)).toEqual([]);
    await controller.delete({ appId, now: Date.now() });
  });

  it("Start writes the stopped instance's row with nothing to drain; Delete removes what the ledger still names", { timeout: 60_000 }, async () => {
    const { appId, controller } = await runningApp();
    await controller.stop({ appId, now: Date.now() });
    const stopped = (await getApp(env, appId))!;
    expect(await controller.start({ appId, now: Date.now() })).toEqual({ outcome: "done" });
    const rows = await retireRowsOf(env, appId);
    // The real alarm, set for the row's deadline (now), may have retired it already.
    if (rows.length > 0) {
      expect(rows).toMatchObject([{ instanceId: stopped.instanceId, serving: false }]);
      expect(rows[0]!.drainUntil).toBe(rows[0]!.createdAt);
    }
    await vi.waitFor(async () => expect(await fake.instances(labels(appId))).not.toContain(stopped.instanceId), { timeout: 10_000, interval: 200 });
    expect(await retireRowsOf(env, appId)).toEqual([]);

    expect(await controller.changePlan({ appId, plan: "pro", now: Date.now() })).toEqual({ outcome: "done" });
    expect(await retireRowsOf(env, appId)).toHaveLength(1);
    expect(await fake.instances(labels(appId))).toHaveLength(2);
    expect(await controller.delete({ appId, now: Date.now() })).toEqual({ outcome: "done" });
    expect(await fake.instances(labels(appId))).toEqual([]);
    expect(await retireRowsOf(env, appId)).toEqual([]);
  });

  it("a deploy's switch writes the row in the same batch, and the real alarm retires the old instance after the drain", { timeout: 60_000 }, async () => {
    const { client, appId } = await runningApp();
    const before = (await getApp(env, appId))!;
    await client.json("POST", `/console/api/apps/${appId}/deploy`);
    const live = await waitForDeploy(client, appId);
    expect(live.latest_deploy).toMatchObject({ status: "live" });
    const after = (await getApp(env, appId))!;
    expect(await retireRowsOf(env, appId)).toMatchObject([{ instanceId: before.instanceId, serving: true }]);
    await vi.waitFor(async () => expect(await fake.instances(labels(appId))).toEqual([after.instanceId]), { timeout: 20_000, interval: 250 });
    expect(await retireRowsOf(env, appId)).toEqual([]);
    await client.call("DELETE", `/console/api/apps/${appId}`);
  });
});

describe("runner heartbeats", () => {
  /** A deploy recorded and marked in flight whose job never ran (its message was lost). */
  async function lostDeploy(appId: string, mark: Record<string, unknown> = {}) {
    const app = (await getApp(env, appId))!;
    const deployId = crypto.randomUUID();
    const since = Date.now();
    expect(await recordDeploy(env, app, deployId, since, { charge: false })).toEqual({ ok: true });
    await runInDurableObject(appController(env, appId) as unknown as DurableObjectStub, (_instance: unknown, state) => {
      state.storage.kv.put("in_flight", { kind: "deploy", deployId, since, ...mark });
    });
    return { deployId, since };
  }

  it("a deploy whose runner is silent for a minute is handed to a new runner once, which finishes it", { timeout: 60_000 }, async () => {
    const { client, appId, controller } = await runningApp();
    const { deployId, since } = await lostDeploy(appId);
    await controller.tick(since + RUNNER_SILENT_MS - 1);
    expect(await controller.inFlight()).toEqual({ kind: "deploy", deployId });
    expect((await deployById(env, deployId))!.runnerAliveAt).toBeNull();

    await controller.tick(since + RUNNER_SILENT_MS);
    const live = await waitForDeploy(client, appId);
    expect(live.latest_deploy).toMatchObject({ id: deployId, status: "live" });
    expect(await readDeployLog(env.LOGS, appId, deployId)).toContain("The deploy's runner stopped answering during the build; a new runner takes it over");
    await client.call("DELETE", `/console/api/apps/${appId}`);
  });

  it("silent again after its one hand-over: failed with the sentence in its log, the old instance still serving", { timeout: 60_000 }, async () => {
    const { client, appId, controller } = await runningApp();
    const serving = (await getApp(env, appId))!.instanceId;
    const { deployId, since } = await lostDeploy(appId, { requeues: 1 });
    await controller.tick(since + RUNNER_SILENT_MS);
    const message = "The deploy's runner stopped answering during the build; press Deploy to try again.";
    const after = await client.json<AppJson>("GET", `/console/api/apps/${appId}`);
    expect(after).toMatchObject({ status: "running", deploy_in_progress: false, latest_deploy: { id: deployId, status: "failed", failure: { kind: "interrupted", message } } });
    expect(await readDeployLog(env.LOGS, appId, deployId)).toContain(`==> Deploy failed: ${message}`);
    expect((await getApp(env, appId))!.instanceId).toBe(serving);
    expect(await controller.inFlight()).toBeNull();
    expect((await client.call("POST", `/console/api/apps/${appId}/deploy`)).status).toBe(202);
    await waitForDeploy(client, appId);
    await client.call("DELETE", `/console/api/apps/${appId}`);
  });

  it("a variable switch lost with a restart of the controller ends at its next alarm: `applying` cleared, the failure recorded", { timeout: 60_000 }, async () => {
    const { client, appId, controller } = await runningApp();
    const app = (await getApp(env, appId))!;
    const stray = await runtimeFor(env)!.start({ image: app.image!, name: unique("stray"), labels: { ...labels(appId), "control-plane.deploy_id": app.liveDeployId! }, env: {}, port: app.port!, limits: { memoryBytes: 64 << 20, cpus: 0.5 } });
    // As if a save's run had been lost with the object that ran it: a newer set saved, its switch never done.
    await runInDurableObject(controller as unknown as DurableObjectStub, (_instance: unknown, state) => {
      state.storage.kv.put("in_flight", { kind: "env", appId, since: Date.now(), runner: "an-earlier-incarnation" });
    });
    await database(env).run(`UPDATE apps SET env_version = ${app.envVersion + 1} WHERE id = '${appId}'`);
    await controller.tick(Date.now());
    expect(await controller.inFlight()).toBeNull();
    const view = await client.json<{ env: { applying: boolean; failure: { message: string } | null } }>("GET", `/console/api/apps/${appId}`);
    expect(view.env.applying).toBe(false);
    expect(view.env.failure?.message).toMatch(/stopped when the control plane restarted/);
    // The dead run's instance, which no record names, is gone; the serving one stays.
    expect(await fake.instances(labels(appId))).not.toContain(stray.id);
    expect(await fake.instances(labels(appId))).toContain((await getApp(env, appId))!.instanceId);
    await client.call("DELETE", `/console/api/apps/${appId}`);
  });

  it("a Delete lost with a restart of the controller is run to its end by the next alarm: instance, images and record gone", { timeout: 60_000 }, async () => {
    const { client, appId, controller } = await runningApp();
    const app = (await getApp(env, appId))!;
    // As if the Delete had removed the instance and been lost with the object before the record went.
    await fake.remove(app.instanceId!);
    await runInDurableObject(controller as unknown as DurableObjectStub, (_instance: unknown, state) => {
      state.storage.kv.put("in_flight", { kind: "delete", since: Date.now(), runner: "an-earlier-incarnation" });
    });
    await controller.tick(Date.now());
    expect(await getApp(env, appId)).toBeUndefined();
    expect(await controller.inFlight()).toBeNull();
    expect(await fake.instances(labels(appId))).toEqual([]);
    expect(await fake.images(`control-plane/app-${appId}`)).toEqual([]);
    expect((await client.call("GET", `/console/api/apps/${appId}`)).status).toBe(404);
    // Running it again finds nothing to do.
    await controller.tick(Date.now());
    expect(await getApp(env, appId)).toBeUndefined();
  });
});
