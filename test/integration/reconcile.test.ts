import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { packTar } from "modern-tar";
import { describe, expect, it } from "vitest";
import { appController } from "../../src/apps/app-controller";
import { APP_ID_LABEL, appImageRepository } from "../../src/apps/launch";
import { reconcileEngine, reconcileOneApp } from "../../src/apps/reconcile";
import { lastReconcileRun } from "../../src/apps/reconcile-runs";
import { createApp } from "../../src/app";
import { appCharges } from "../../src/billing/ledger";
import { database } from "../../src/db/client";
import { apps } from "../../src/db/schema";
import { defaultDeps } from "../../src/http/context";
import { DockerRuntime, runtimeFor } from "../../src/runtime";
import { engineKey, portRows } from "../../src/runtime/ports";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { ORIGIN } from "./helpers";

// The reconciler (README, Operations) against the fake Docker Engine at its HTTP boundary: what no
// record explains goes once it is older than RECONCILE_GRACE_SECONDS and no change to its app is in
// flight; a running app whose instance is gone is brought back through the one launch path with
// its billing untouched; another control plane's objects on the same engine are left alone.

const LATER = () => Date.now() + 301_000;
const LIMITS = { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 };

async function deployedApp(page: string) {
  const client = await signedUpClient();
  const repository = await publishRepository(`reconcile-${Date.now() % 100000}-${Math.random().toString(36).slice(2, 6)}`, httpdFiles(page));
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Reconciled", repository });
  await client.json("POST", `/console/api/apps/${app.id}/deploy`);
  expect((await waitForDeploy(client, app.id)).status).toBe("running");
  return { client, app, row: async () => (await database(env).select().from(apps).where(eq(apps.id, app.id)).get())! };
}

async function operator(method: string, path: string): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`${ORIGIN}/admin/api${path}`, { method, headers: { "CF-Connecting-IP": "198.51.100.31", Authorization: `Bearer ${env.OPERATOR_TOKEN}` } });
  const res = await createApp(defaultDeps).fetch(request, env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("the reconciler", () => {
  it("removes an old stray instance, its port row and an image no deploy keeps, and brings back a running app whose instance is gone", async () => {
    const { app, row } = await deployedApp("<p>brought back</p>");
    const before = await row();
    const charges = await appCharges(env, app.id);
    const runtime = runtimeFor(env)!;
    // A stray instance (started through the port table, as a launch would) and an image no deploy names.
    const stray = await runtime.start({ image: before.image!, name: `stray-${app.id.slice(0, 8)}`, labels: { [APP_ID_LABEL]: app.id }, env: {}, port: 8080, limits: LIMITS });
    const docker = new DockerRuntime({ url: env.RUNTIME_URL });
    const strayImage = `${appImageRepository(app.id)}:stray`;
    const files = httpdFiles("<p>stray</p>");
    const context = await packTar(Object.entries(files).map(([name, body]) => ({ header: { name, size: new TextEncoder().encode(body).length, mode: 0o644 }, body })));
    expect((await docker.build({ context: new Blob([context]).stream(), dockerfile: "Dockerfile", tag: strayImage })).ok).toBe(true);
    // The app's own instance disappears behind the records' back.
    await runtime.remove(before.instanceId!);

    // Within the grace period nothing is removed, but the dark app is brought back at once.
    const first = await reconcileOneApp(env, app.id, Date.now());
    expect(first.counts).toMatchObject({ removed_instances: 0, restored: 1, failed: 0 });
    const restored = await row();
    expect(restored.instanceId).not.toBe(before.instanceId);
    expect(restored.status).toBe("running");
    expect(await (await fetch(restored.instanceUrl!)).text()).toContain("brought back");
    expect(await docker.inspect(stray.id)).not.toBeNull();

    // Past the grace period the stray goes, with its port row.
    const second = await reconcileOneApp(env, app.id, LATER());
    expect(second.counts).toMatchObject({ removed_instances: 1, restored: 0, failed: 0 });
    expect(second.actions).toContainEqual({ app_id: app.id, action: "remove_instance", object: stray.id, outcome: "done" });
    expect(await docker.inspect(stray.id)).toBeNull();
    expect((await docker.instances({ [APP_ID_LABEL]: app.id })).sort()).toEqual([restored.instanceId!]);
    const ports = await portRows(database(env), engineKey(env.RUNTIME_URL), app.id);
    expect(ports.map((p) => p.instanceId)).toEqual([restored.instanceId!]);
    expect(second.actions).toContainEqual({ app_id: app.id, action: "remove_image", object: strayImage, outcome: "done" });
    expect(await docker.hasImage(strayImage)).toBe(false);
    expect(await docker.hasImage(restored.image!)).toBe(true);
    // Billing untouched: no charge was made for bringing the app back.
    expect(await appCharges(env, app.id)).toEqual(charges);
    expect({ periodStart: restored.periodStart, periodEnd: restored.periodEnd }).toEqual({ periodStart: before.periodStart, periodEnd: before.periodEnd });
  }, 60_000);

  it("leaves an app alone while a change to it is in flight, and has the alarm end one lost with an earlier start of the controller", async () => {
    const { app, row } = await deployedApp("<p>busy</p>");
    const runtime = runtimeFor(env)!;
    await runtime.remove((await row()).instanceId!);
    const stub = appController(env, app.id);
    const inFlight = () => runInDurableObject(stub, (_instance: unknown, state) => state.storage.kv.get("in_flight") ?? null);
    // Change plan, run by an earlier start of the object (a crash or a Worker deploy ended it).
    await runInDurableObject(stub, async (_instance: unknown, state) => {
      state.storage.kv.put("in_flight", { kind: "plan", since: Date.now(), runner: "an-earlier-start" });
      await state.storage.deleteAlarm();
    });
    expect(await stub.reconcile({ appId: app.id, now: LATER(), look: true })).toEqual({ outcome: "busy" });
    expect((await row()).instanceUrl).not.toBeNull();
    for (let i = 0; i < 50 && (await inFlight()) !== null; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await inFlight()).toBeNull();
    expect((await reconcileOneApp(env, app.id, Date.now())).counts).toMatchObject({ restored: 1, busy: 0 });
  }, 60_000);

  it("looks at the app after a deploy of it failed: a running app whose instance is gone is brought back", async () => {
    const name = `reconcile-failed-${Date.now() % 100000}`;
    const client = await signedUpClient();
    const repository = await publishRepository(name, httpdFiles("<p>still here</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Failing", repository });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    expect((await waitForDeploy(client, app.id)).status).toBe("running");
    const before = (await database(env).select().from(apps).where(eq(apps.id, app.id)).get())!;
    await runtimeFor(env)!.remove(before.instanceId!);
    // The next deploy's build fails (the fake engine fails a `RUN false` step).
    await publishRepository(name, { ...httpdFiles("<p>broken</p>"), Dockerfile: "FROM scratch\nRUN false\n" });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    expect((await waitForDeploy(client, app.id)).latest_deploy?.status).toBe("failed");
    // The controller records the failure, then reconciles: the app's run lands just after.
    for (let i = 0; i < 100 && !(await lastReconcileRun(env, app.id)); i++) await new Promise((r) => setTimeout(r, 100));
    const after = (await database(env).select().from(apps).where(eq(apps.id, app.id)).get())!;
    expect(after.instanceId).not.toBe(before.instanceId);
    expect(await (await fetch(after.instanceUrl!)).text()).toContain("still here");
    expect(await lastReconcileRun(env, app.id)).toMatchObject({ scope: app.id, counts: expect.objectContaining({ restored: 1 }) });
  }, 60_000);

  it("leaves another control plane's objects alone, and the runtime report shows the run and the ledger", async () => {
    const docker = new DockerRuntime({ url: env.RUNTIME_URL });
    const { row } = await deployedApp("<p>ours</p>");
    // An instance labelled for an app this control plane has no record of (another one sharing the engine).
    const foreign = await docker.start({ image: (await row()).image!, name: `foreign-${Date.now()}`, labels: { [APP_ID_LABEL]: crypto.randomUUID() }, env: {}, port: 8080, limits: LIMITS });
    try {
      const res = await operator("POST", "/reconcile");
      expect(res.status).toBe(200);
      const { run } = (await res.json()) as { run: { scope: string; counts: Record<string, number>; actions: unknown[] } };
      expect(run.scope).toBe("engine");
      expect(run.counts.foreign).toBeGreaterThanOrEqual(1);
      expect(await docker.inspect(foreign.id)).not.toBeNull();
      // The cron's run is the same function.
      expect((await reconcileEngine(env, LATER()))?.scope).toBe("engine");
      expect(await docker.inspect(foreign.id)).not.toBeNull();

      const report = (await (await operator("GET", "/runtime")).json()) as { retire_ledger: { length: number }; reconciler: { last_run: { scope: string; started_at: string; counts: Record<string, number> } | null; last_engine_run: unknown } };
      expect(report.retire_ledger.length).toBeGreaterThanOrEqual(0);
      expect(report.reconciler.last_run).toMatchObject({ scope: "engine", counts: expect.objectContaining({ restored: 0, failed: 0 }) });
      expect(report.reconciler.last_engine_run).not.toBeNull();
    } finally {
      await docker.remove(foreign.id);
    }
  }, 60_000);

  it("refuses the operator route without the token", async () => {
    const ctx = createExecutionContext();
    const res = await createApp(defaultDeps).fetch(new Request(`${ORIGIN}/admin/api/reconcile`, { method: "POST", headers: { "CF-Connecting-IP": "198.51.100.32" } }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(401);
  });
});
