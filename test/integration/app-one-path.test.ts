import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { appController } from "../../src/apps/app-controller";
import { APP_ID_LABEL, launchAndSwitch } from "../../src/apps/launch";
import { DEFAULT_HEALTH_CHECK } from "../../src/apps/health";
import { switchInstance } from "../../src/apps/app-columns";
import { getApp } from "../../src/apps/store";
import { DockerRuntime } from "../../src/runtime";
import type { ContainerRuntime, InstanceSpec } from "../../src/runtime/types";
import { addOneMonth } from "../../src/billing/period";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Every change to an app through its AppController: settings under the change mark, refusals by
// field before anything reaches the records, the billing of a deploy after the paid period, and
// the one launch-and-switch whose switch is a compare-and-set on the instance it replaces.

const DAY = 24 * 60 * 60 * 1000;
let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;
interface Entry {
  kind: string;
  amount: number;
  app_id: string | null;
  period_start: string | null;
  period_end: string | null;
}

describe("settings through the AppController", () => {
  it("answers 400 naming the field for an unknown field or a body with no setting, and writes nothing", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("repo"), httpdFiles("<p>x</p>"));
    const app = await client.json<AppJson & { name: string }>("POST", "/console/api/apps", { name: "Web", repository, subdomain: unique("set") });
    for (const [body, field] of [
      [{ instance_id: "abc" }, "instance_id"],
      [{ name: "Renamed", status: "running" }, "status"],
      [{}, ""],
    ] as const) {
      const res = await client.call("PATCH", `/console/api/apps/${app.id}`, body);
      expect(res.status).toBe(400);
      const reply = (await res.json()) as { success: boolean; code: string; error: string };
      expect(reply).toMatchObject({ success: false, code: "INVALID_REQUEST" });
      if (field) expect(reply.error.startsWith(`${field}: `)).toBe(true);
    }
    expect((await client.json<{ name: string }>("GET", `/console/api/apps/${app.id}`)).name).toBe("Web");
    const saved = await client.json<{ name: string }>("PATCH", `/console/api/apps/${app.id}`, { name: "Renamed" });
    expect(saved.name).toBe("Renamed");
  });

  it("refuses a settings change while a deploy is in flight, and the subdomain once the first deploy was pressed", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("repo"), httpdFiles("<p>x</p>", { buildSeconds: 2 }));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Web", repository, subdomain: unique("frozen") });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    const during = await client.call("PATCH", `/console/api/apps/${app.id}`, { subdomain: unique("moved") });
    expect(during.status).toBe(409);
    expect(((await during.json()) as { code: string }).code).toBe("CHANGE_IN_FLIGHT");
    await waitForDeploy(client, app.id);
    const after = await client.call("PATCH", `/console/api/apps/${app.id}`, { subdomain: unique("moved") });
    expect(after.status).toBe(400);
    expect(((await after.json()) as { error: string }).error).toBe("subdomain: The subdomain can only be changed until the first deploy.");
  });

  it("two apps racing for one subdomain: the unique index answers the loser's field, never 500", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("repo"), httpdFiles("<p>x</p>"));
    const [a, b] = await Promise.all([1, 2].map(() => client.json<AppJson>("POST", "/console/api/apps", { name: "Web", repository })));
    const wanted = unique("race");
    const replies = await Promise.all([a!, b!].map((x) => client.call("PATCH", `/console/api/apps/${x.id}`, { subdomain: wanted })));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400]);
    const loser = replies.find((r) => r.status === 400)!;
    expect(((await loser.json()) as { error: string }).error).toBe("subdomain: This subdomain is already in use. Choose another.");
  });
});

describe("billing of a deploy after the paid period (moved clock)", () => {
  it("a first deploy that fails, the clock moved past its period, then a successful deploy charges exactly one month from then", async () => {
    const client = await signedUpClient({ credit: 5000 });
    const good = await publishRepository(unique("repo"), httpdFiles("<p>late</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Late", repository: `${env.FORGE_URL}/acme/${unique("missing")}`, subdomain: unique("late") });
    const failed = await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    expect(failed).toBeTruthy();
    expect(await waitForDeploy(client, app.id)).toMatchObject({ status: "failed", latest_deploy: { status: "failed" } });
    const first = (await getApp(env, app.id))!;
    expect(first.billingCharged).toBe(true);

    await client.json("PATCH", `/console/api/apps/${app.id}`, { repository: good });
    const later = first.periodEnd! + 75 * DAY;
    const controller = appController(env, app.id);
    expect(await controller.deploy({ appId: app.id, deployId: crypto.randomUUID(), now: later })).toMatchObject({ outcome: "started" });
    expect(await waitForDeploy(client, app.id)).toMatchObject({ status: "running", latest_deploy: { status: "live" } });
    const wallet = await client.json<{ balance: number; entries: Entry[] }>("GET", "/console/api/wallet");
    const charges = wallet.entries.filter((e) => e.kind === "charge" && e.app_id === app.id);
    expect(charges).toHaveLength(2);
    expect(wallet.balance).toBe(5000 - 2 * 1200);
    expect(charges[0]).toMatchObject({ amount: -1200, period_start: new Date(later).toISOString(), period_end: new Date(addOneMonth(later)).toISOString() });
    const now = (await getApp(env, app.id))!;
    expect(now).toMatchObject({ periodStart: later, periodEnd: addOneMonth(later), stoppedSince: null, paymentDue: false });
    // The renewal starts from the fresh period: nothing more is charged before its end.
    await controller.tick(addOneMonth(later) - 1);
    expect((await client.json<{ balance: number }>("GET", "/console/api/wallet")).balance).toBe(5000 - 2 * 1200);
    await controller.delete({ appId: app.id, now: later });
  });

  it("without the funds for that month the deploy is refused with 402 and nothing moves", async () => {
    const client = await signedUpClient({ credit: 1200 });
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Poor", repository: `${env.FORGE_URL}/acme/${unique("missing")}`, subdomain: unique("poor") });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const before = (await getApp(env, app.id))!;
    const result = await appController(env, app.id).deploy({ appId: app.id, deployId: crypto.randomUUID(), now: before.periodEnd! + DAY });
    expect(result).toMatchObject({ outcome: "refused", code: "INSUFFICIENT_FUNDS" });
    expect(await getApp(env, app.id)).toEqual(before);
    expect((await client.json<{ balance: number }>("GET", "/console/api/wallet")).balance).toBe(0);
  });
});

describe("launchAndSwitch", () => {
  it("a late finisher (the app moved on meanwhile) switches nothing, removes its instance and says so in its log", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("repo"), httpdFiles("<p>x</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Web", repository, subdomain: unique("late") });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const row = (await getApp(env, app.id))!;
    const runtime = new DockerRuntime({ url: env.RUNTIME_URL });
    const lines: string[] = [];
    const outcome = await launchAndSwitch({
      runtime,
      spec: { appId: app.id, image: row.image!, port: row.port!, portReason: row.portReason ?? "", plan: "lite", env: {}, deployId: row.liveDeployId! },
      probeTimeoutSeconds: 10,
      log: async (text) => void lines.push(text),
      // A switch that expected another instance: the compare-and-set finds the app moved on.
      switchTo: async (instance) =>
        (await switchInstance(env, app, { instanceId: instance.id, instanceUrl: instance.url }, "an-instance-replaced-since"))
          ? { switched: true, replaced: { instanceId: null, image: null, serving: false } }
          : { switched: false, reason: "a newer change to the app took over while this instance started." },
    });
    expect(outcome).toMatchObject({ ok: false, kind: "not_switched" });
    expect(lines.at(-1)).toMatch(/^Not switched: a newer change to the app took over while this instance started\. Instance \w{12} was removed; nothing changed\.$/);
    expect((await getApp(env, app.id))!.instanceId).toBe(row.instanceId);
    expect(await runtime.instances({ [APP_ID_LABEL]: app.id })).toEqual([row.instanceId]);
    await appController(env, app.id).delete({ appId: app.id, now: Date.now() });
  });
});

describe("launchAndSwitch on an engine that switches generations itself (Swarm's `replace`)", () => {
  /**
   * The fake engine's adapter plus `replace`/`revert` as a swarm adapter offers them: replace runs
   * the new spec and answers under the replaced instance's id; every call is recorded.
   */
  function inPlaceRuntime() {
    const base = new DockerRuntime({ url: env.RUNTIME_URL });
    const calls: string[] = [];
    const runtime: ContainerRuntime = Object.assign(Object.create(base) as ContainerRuntime, {
      replace: async (id: string, spec: InstanceSpec) => {
        calls.push(`replace ${id}`);
        const started = await base.start(spec);
        calls.push(`(new generation ${started.id})`);
        return { ...started, id };
      },
      revert: async (id: string) => void calls.push(`revert ${id}`),
      remove: async (id: string, options?: { graceSeconds?: number }) => {
        calls.push(`remove ${id}`);
        await base.remove(id, options);
      },
    });
    return { runtime, calls, base };
  }

  it("replaces the current instance in place and removes nothing; one that does not answer is reverted, not removed", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("repo"), httpdFiles("<p>x</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Web", repository, subdomain: unique("inplace") });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const row = (await getApp(env, app.id))!;
    const { runtime, calls, base } = inPlaceRuntime();
    const spec = { appId: app.id, image: row.image!, port: row.port!, portReason: row.portReason ?? "", plan: "lite" as const, env: {}, deployId: row.liveDeployId! };
    const lines: string[] = [];
    const switched = await launchAndSwitch({
      runtime,
      replaces: row.instanceId,
      spec,
      probeTimeoutSeconds: 10,
      log: async (text) => void lines.push(text),
      switchTo: async () => ({ switched: true, replaced: { instanceId: row.instanceId, image: null, serving: true } }),
    });
    expect(switched).toMatchObject({ ok: true, instance: { id: row.instanceId } });
    expect(calls.filter((c) => !c.startsWith("("))).toEqual([`replace ${row.instanceId}`]);
    expect(lines.at(-1)).toBe(`Previous generation of instance ${row.instanceId!.slice(0, 12)} stopped by the engine`);

    calls.length = 0;
    const failed = await launchAndSwitch({
      runtime,
      replaces: row.instanceId,
      // Nothing listens on this port inside the instance: the probe fails (no grace period to wait out).
      spec: { ...spec, port: 9, portReason: "test", healthCheck: { ...DEFAULT_HEALTH_CHECK, graceSeconds: 0 } },
      probeTimeoutSeconds: 2,
      switchTo: async () => ({ switched: false, reason: "never reached" }),
    });
    expect(failed).toMatchObject({ ok: false, kind: "probe_failed" });
    expect(calls.filter((c) => !c.startsWith("("))).toEqual([`replace ${row.instanceId}`, `revert ${row.instanceId}`]);
    // The stand-in's extra containers are this test's to remove.
    for (const id of await base.instances({ [APP_ID_LABEL]: app.id })) if (id !== row.instanceId) await base.remove(id);
    await appController(env, app.id).delete({ appId: app.id, now: Date.now() });
  });
});
