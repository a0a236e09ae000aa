import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { appController } from "../../src/apps/app-controller";
import { checkAppHealth } from "../../src/apps/health-check";
import { launchInstance, liveSpec } from "../../src/apps/launch";
import { getApp } from "../../src/apps/store";
import { runtimeFor } from "../../src/runtime";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { fieldError, inputValue, signedUpPage } from "./console-pages-helpers";

// Health checks: `health_check` in PATCH /console/api/apps/{id} (bounds, a path only, the field
// named in each 400, another account's app 404), the deploy probe using it, and the controller's
// periodic check restarting the instance after 3 failures in a row (refused while another change
// is in flight: the next check tries again), with `health` in the app JSON. The engine is the
// fake Docker Engine at its HTTP boundary; the clock is the controller's `tick(now)`.

interface HealthJson extends AppJson {
  health: { state: string; last_failure: { at: string; message: string } | null };
  health_check: { path: string; expect: string; timeout_seconds: number; grace_seconds: number };
  latest_deploy: AppJson["latest_deploy"];
}

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

/** httpd files plus CGI scripts: a redirect elsewhere, a slow answer, a 503. */
function files(page = "<p>up</p>"): Record<string, string> {
  return {
    ...httpdFiles(page),
    "www/cgi-bin/redirect": "#!/bin/busybox sh\nprintf 'Status: 302 Found\\r\\nLocation: http://169.254.169.254/latest/meta-data/\\r\\n\\r\\n'\n",
    "www/cgi-bin/slow": "#!/bin/busybox sh\nsleep 3\nprintf 'Content-Type: text/plain\\r\\n\\r\\n'\necho late\n",
    "www/cgi-bin/down": "#!/bin/busybox sh\nprintf 'Status: 503 Service Unavailable\\r\\n\\r\\n'\necho down SECRET_VALUE\n",
  };
}

async function deployedApp() {
  const client = await signedUpClient();
  const repository = await publishRepository(unique("health"), files());
  const app = await client.json<HealthJson>("POST", "/console/api/apps", { name: "Web", repository, subdomain: unique("hc") });
  await client.json("POST", `/console/api/apps/${app.id}/deploy`);
  const live = (await waitForDeploy(client, app.id)) as HealthJson;
  expect(live.latest_deploy?.status).toBe("live");
  return { client, app: live };
}

/**
 * Waits until the check the PATCH scheduled at once (a real alarm) has run and ended (its record
 * written, the next alarm set an interval ahead), so the test's own ticks are counted alone.
 */
async function firstCheck(appId: string): Promise<void> {
  const stub = appController(env, appId) as unknown as DurableObjectStub;
  for (let i = 0; i < 200; i++) {
    const alarm = await runInDurableObject(stub, (_instance: unknown, state) => state.storage.getAlarm());
    if ((await getApp(env, appId))?.health && alarm !== null && alarm > Date.now() + 5 * SECOND) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the first health check did not run");
}

const SECOND = 1000;

describe("PATCH health_check", () => {
  it("shows the defaults, saves a check field by field and refuses bad ones naming the field", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("health"), files());
    const app = await client.json<HealthJson>("POST", "/console/api/apps", { name: "Web", repository, subdomain: unique("hc") });
    expect(app.health_check).toEqual({ path: "/", expect: "any", timeout_seconds: 5, grace_seconds: 10 });
    expect(app.health).toEqual({ state: "unknown", last_failure: null });

    const saved = await client.json<HealthJson>("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/healthz?full=1", expect: "2xx-3xx" } });
    expect(saved.health_check).toEqual({ path: "/healthz?full=1", expect: "2xx-3xx", timeout_seconds: 5, grace_seconds: 10 });
    const again = await client.json<HealthJson>("PATCH", `/console/api/apps/${app.id}`, { health_check: { timeout_seconds: 2, grace_seconds: 0 } });
    expect(again.health_check).toEqual({ path: "/healthz?full=1", expect: "2xx-3xx", timeout_seconds: 2, grace_seconds: 0 });

    const cases: [unknown, string][] = [
      [{ path: "http://169.254.169.254/" }, "health_check.path: Give a path on the app starting with / (such as /healthz), not a full address."],
      [{ path: "//evil.example/" }, "health_check.path: Give a path on the app starting with / (such as /healthz), not a full address."],
      [{ path: "/../../etc/passwd" }, "health_check.path: The path may not hold . or .. segments."],
      [{ path: "/%2e%2e/x" }, "health_check.path: The path may not hold . or .. segments."],
      [{ path: 7 }, "health_check.path: Give a path such as / or /healthz."],
      [{ expect: "200" }, "health_check.expect: Choose what a healthy answer is: any or 2xx-3xx."],
      [{ timeout_seconds: 0 }, "health_check.timeout_seconds: The timeout is a whole number of seconds from 1 to 60."],
      [{ timeout_seconds: 3600 }, "health_check.timeout_seconds: The timeout is a whole number of seconds from 1 to 60."],
      [{ grace_seconds: 601 }, "health_check.grace_seconds: The grace period is a whole number of seconds from 0 to 600."],
      [{ grace_seconds: "10" }, "health_check.grace_seconds: The grace period is a whole number of seconds from 0 to 600."],
    ];
    for (const [body, error] of cases) {
      const res = await client.call("PATCH", `/console/api/apps/${app.id}`, { health_check: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toEqual({ success: false, code: "INVALID_REQUEST", error });
    }
    const unknown = await client.call("PATCH", `/console/api/apps/${app.id}`, { health_check: { interval_seconds: 1 } });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: string }).error).toMatch(/^health_check: .*interval_seconds/);
    const notObject = await client.call("PATCH", `/console/api/apps/${app.id}`, { health_check: "/healthz" });
    expect(notObject.status).toBe(400);
    expect(((await notObject.json()) as { error: string }).error).toMatch(/^health_check: /);

    // Another account's app: 404 exactly like a missing one, and nothing changed.
    const stranger = await signedUpClient();
    const theirs = await stranger.call("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/x" } });
    expect(theirs.status).toBe(404);
    expect((await client.json<HealthJson>("GET", `/console/api/apps/${app.id}`)).health_check.path).toBe("/healthz?full=1");
  });
});

describe("the deploy probe uses the health check", () => {
  it("a new instance whose health path does not give the expected answer is not switched to, and the sentence names path and status", async () => {
    const { app } = await deployedApp();
    const row = (await getApp(env, app.id))!;
    const runtime = runtimeFor(env)!;
    const failing = liveSpec({ ...row, healthCheck: { path: "/missing", expect: "2xx-3xx", timeoutSeconds: 1, graceSeconds: 0 } }, "lite", {})!;
    const lines: string[] = [];
    const failed = await launchInstance(runtime, failing, { probeTimeoutSeconds: 2, log: async (line) => void lines.push(line) });
    expect(failed).toEqual({ ok: false, kind: "probe_failed", message: "The container started but its health check on port 8080 did not pass within 2 s: /missing answered HTTP 404 (expected 2xx-3xx)." });
    expect(lines[0]).toMatch(/probing port 8080 \(.*\) at \/missing \(expecting 2xx-3xx\) for up to 2 s$/);

    // The same path under `any`: a 404 is an answer.
    const passing = liveSpec({ ...row, healthCheck: { path: "/missing", expect: "any", timeoutSeconds: 1, graceSeconds: 0 } }, "lite", {})!;
    const launched = await launchInstance(runtime, passing, { probeTimeoutSeconds: 2 });
    expect(launched.ok).toBe(true);
    if (launched.ok) await runtime.remove(launched.instance.id);
  }, 60_000);
});

describe("the periodic check", () => {
  it("three failures in a row restart the instance and show unhealthy with the last failure, no body in it", async () => {
    const { client, app } = await deployedApp();
    const saved = await client.json<HealthJson>("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/cgi-bin/down", expect: "2xx-3xx", timeout_seconds: 2, grace_seconds: 0 } });
    expect(saved.health.state).toBe("unknown");
    await firstCheck(app.id);
    const controller = appController(env, app.id);
    const t0 = Date.now() + 60 * SECOND;
    await controller.tick(t0);
    expect((await getApp(env, app.id))!.health).toMatchObject({ failures: 2, state: "unknown" });
    await controller.tick(t0 + 30 * SECOND);
    const after = (await getApp(env, app.id))!;
    // Restarted: the count starts again (the grace period from the restart), the state stays unhealthy.
    expect(after.health).toMatchObject({ instanceId: after.instanceId, failures: 0, since: t0 + 30 * SECOND, state: "unhealthy" });
    const json = await client.json<HealthJson>("GET", `/console/api/apps/${app.id}`);
    expect(json.status).toBe("running");
    expect(json.health.state).toBe("unhealthy");
    expect(json.health.last_failure).toEqual({ at: new Date(t0 + 30 * SECOND).toISOString(), message: "/cgi-bin/down answered HTTP 503 (expected 2xx-3xx)." });
    expect(JSON.stringify(json.health)).not.toContain("SECRET_VALUE");

    // A good path makes it healthy again at the next check.
    await client.json("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/" } });
    // This PATCH too schedules a check at once (a real alarm): under load it could land after the
    // tick below and write its own verdict over the tick's. Let it run and end first.
    await firstCheck(app.id);
    await controller.tick(t0 + 120 * SECOND);
    expect((await client.json<HealthJson>("GET", `/console/api/apps/${app.id}`)).health).toMatchObject({ state: "healthy" });
  }, 60_000);

  it("a check that began on the old path and ends after a PATCH saved a new one records nothing", async () => {
    const { client, app } = await deployedApp();
    await firstCheck(app.id);
    // The app as the first check after going live reads it: no verdict yet, so a 200 would write one.
    const before = { ...(await getApp(env, app.id))!, health: null };
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    // The probe of the old path answers 200 only once the PATCH below has been saved.
    const slowOk: typeof fetch = async () => {
      await answered;
      return new Response("up", { status: 200 });
    };
    const check = checkAppHealth(env, before, Date.now(), async () => ({ outcome: "done" as const }), { fetch: slowOk });
    await client.json("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/cgi-bin/down", expect: "2xx-3xx", grace_seconds: 0 } });
    await firstCheck(app.id);
    const afterPatch = (await getApp(env, app.id))!.health;
    answer();
    await check;
    // The new path's own verdict stands; the old path's 200 did not overwrite it.
    expect((await getApp(env, app.id))!.health).toEqual(afterPatch);
    expect(afterPatch).toMatchObject({ failures: 1, state: "unknown" });
  }, 60_000);

  it("a restart refused while another change is in flight waits for the next check", async () => {
    const { client, app } = await deployedApp();
    await client.json("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/nothing-here", expect: "2xx-3xx", grace_seconds: 0 } });
    await firstCheck(app.id);
    const controller = appController(env, app.id);
    const t0 = Date.now() + 60 * SECOND;
    await controller.tick(t0);
    const stub = controller as unknown as DurableObjectStub;
    await runInDurableObject(stub, (_instance: unknown, state) => state.storage.kv.put("in_flight", { kind: "plan", since: t0 }));
    await controller.tick(t0 + 30 * SECOND);
    expect((await getApp(env, app.id))!.health).toMatchObject({ failures: 3, state: "unhealthy" });
    await runInDurableObject(stub, (_instance: unknown, state) => state.storage.kv.delete("in_flight"));
    await controller.tick(t0 + 60 * SECOND);
    expect((await getApp(env, app.id))!.health).toMatchObject({ failures: 0, since: t0 + 60 * SECOND, state: "unhealthy" });
  }, 60_000);

  it("a slow endpoint fails by its timeout; a redirect elsewhere is an answer, never followed", async () => {
    const { client, app } = await deployedApp();
    await client.json("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/cgi-bin/slow", expect: "any", timeout_seconds: 1, grace_seconds: 0 } });
    await firstCheck(app.id);
    const json = await client.json<HealthJson>("GET", `/console/api/apps/${app.id}`);
    expect(json.health.last_failure?.message).toBe("/cgi-bin/slow did not answer within 1 s.");

    await client.json("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/cgi-bin/redirect", expect: "2xx-3xx" } });
    await firstCheck(app.id);
    expect((await client.json<HealthJson>("GET", `/console/api/apps/${app.id}`)).health).toEqual({ state: "healthy", last_failure: null });
  }, 60_000);

  it("a stopped app is not checked and shows unknown", async () => {
    const { client, app } = await deployedApp();
    await client.json("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/nothing-here", expect: "2xx-3xx", grace_seconds: 0 } });
    await firstCheck(app.id);
    await client.json("POST", `/console/api/apps/${app.id}/stop`);
    const record = (await getApp(env, app.id))!.health;
    await appController(env, app.id).tick(Date.now() + 3600 * SECOND);
    expect((await getApp(env, app.id))!.health).toEqual(record);
    expect((await client.json<HealthJson>("GET", `/console/api/apps/${app.id}`)).health).toEqual({ state: "unknown", last_failure: null });
  }, 60_000);
});

describe("the app page's health check form", () => {
  it("shows the settings and the state, refuses a bad field under it and saves a good form", async () => {
    const client = await signedUpPage();
    const repository = await publishRepository(unique("health"), files());
    const created = await client.post("/console/apps", { name: "Web", repository, branch: "main", root_directory: "", dockerfile_path: "Dockerfile", subdomain: "", plan: "lite" });
    const id = /([0-9a-f-]{36})$/.exec(created.headers.get("Location")!)![1]!;
    const page = await client.page(`/console/apps/${id}/settings`);
    expect(page).toContain('<h2 id="health-heading">Health check</h2>');
    expect(await client.page(`/console/apps/${id}`)).toContain('data-health-state="unknown"');
    expect(inputValue(page, "f-path")).toBe("/");
    expect(inputValue(page, "f-timeout_seconds")).toBe("5");

    const bad = await client.post(`/console/apps/${id}/health-check`, { path: "http://evil.example/", expect: "any", timeout_seconds: "99", grace_seconds: "0" });
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(fieldError(html, "path")).toBe("Give a path on the app starting with / (such as /healthz), not a full address.");
    expect(inputValue(html, "f-path")).toBe("http://evil.example/");
    const slow = await client.post(`/console/apps/${id}/health-check`, { path: "/healthz", expect: "any", timeout_seconds: "99", grace_seconds: "0" });
    expect(fieldError(await slow.text(), "timeout_seconds")).toBe("The timeout is a whole number of seconds from 1 to 60.");

    const good = await client.post(`/console/apps/${id}/health-check`, { path: "/healthz", expect: "2xx-3xx", timeout_seconds: "3", grace_seconds: "20" });
    expect(good.status).toBe(303);
    expect((await client.get(`/console/api/apps/${id}`).then((r) => r.json())) as unknown).toMatchObject({ health_check: { path: "/healthz", expect: "2xx-3xx", timeout_seconds: 3, grace_seconds: 20 } });
    expect((await (await signedUpPage()).post(`/console/apps/${id}/health-check`, { path: "/x", expect: "any", timeout_seconds: "3", grace_seconds: "0" })).status).toBe(404);
  });
});
