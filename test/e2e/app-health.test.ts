/**
 * Health checks end to end on a real `wrangler dev` and dockerd, with the check interval at 1 s
 * (HEALTH_CHECK_INTERVAL_SECONDS; 30 s by default): a health path that fails restarts the instance
 * (the engine's own start time moves) and the app JSON shows `unhealthy` with the failing answer;
 * a container that crash-loops after its restart stays one container, shown `unhealthy`.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppJson, type AppsStack, BUSYBOX, curlApp, deployAndWait, httpdApp, repository, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

/** The label every instance of an app carries (src/apps/launch.ts APP_ID_LABEL). */
const APP_ID_LABEL = "control-plane.app_id";

interface HealthJson extends AppJson {
  health: { state: string; last_failure: { at: string; message: string } | null };
}

let stack: AppsStack;
let session: ConsoleSession;

beforeAll(async () => {
  stack = await startAppsStack({ HEALTH_CHECK_INTERVAL_SECONDS: "1" });
  session = await signedUp(stack.worker.url);
});

afterAll(async () => {
  await stack?.stop();
});

const docker = async (...args: string[]) => (await promisify(execFile)("docker", args)).stdout.trim();
const containersOf = async (appId: string) => (await docker("ps", "-a", "-q", "--no-trunc", "--filter", `label=${APP_ID_LABEL}=${appId}`)).split("\n").filter(Boolean);
const startedAt = (id: string) => docker("inspect", "-f", "{{.State.StartedAt}}", id);

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("health checks on dockerd", () => {
  it("a failing health path restarts the instance and shows unhealthy with the failing answer", async () => {
    const name = `hc${Date.now() % 100000}`;
    const repo = await repository(stack, name, httpdApp("ok\n"));
    const app = await session.call<HealthJson>("POST", "/console/api/apps", { name, repository: repo, subdomain: name });
    const live = await deployAndWait(session, app.id);
    expect(live.latest_deploy).toMatchObject({ status: "live" });
    const healthy = await waitFor("first check", () => session.call<HealthJson>("GET", `/console/api/apps/${app.id}`), (a) => a.health.state === "healthy");
    expect(healthy.health).toEqual({ state: "healthy", last_failure: null });

    const [container] = await containersOf(app.id);
    const started = await startedAt(container!);
    await session.call("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/missing", expect: "2xx-3xx", timeout_seconds: 2, grace_seconds: 0 } });

    const unhealthy = await waitFor("unhealthy", () => session.call<HealthJson>("GET", `/console/api/apps/${app.id}`), (a) => a.health.state === "unhealthy");
    expect(unhealthy.status).toBe("running");
    expect(unhealthy.health.last_failure?.message).toBe("/missing answered HTTP 404 (expected 2xx-3xx).");
    // Restarted in place by the engine: the same container, a new start time; it serves again.
    await waitFor("restart", () => startedAt(container!), (at) => at !== started, 15_000);
    expect(await containersOf(app.id)).toEqual([container]);
    expect(await curlApp(stack, name)).toEqual({ status: 200, body: "ok\n" });
  }, 240_000);

  it("a container that crash-loops after a restart stays one container, shown unhealthy, and the app JSON keeps answering", async () => {
    const name = `hcloop${Date.now() % 100000}`;
    // Serves on its first start; every later start of the same container exits at once.
    const script = "if [ -e /ran ]; then echo crashing; exit 3; fi; /bin/busybox touch /ran; exec /bin/busybox httpd -f -p 0.0.0.0:8080 -h /www";
    const repo = await repository(stack, name, {
      Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "sh", "-c", ${JSON.stringify(script)}]\n`,
      busybox: BUSYBOX,
      "www/index.html": "first\n",
    });
    const app = await session.call<HealthJson>("POST", "/console/api/apps", { name, repository: repo, subdomain: name });
    const live = await deployAndWait(session, app.id);
    expect(live.latest_deploy).toMatchObject({ status: "live" });
    await session.call("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/missing", expect: "2xx-3xx", timeout_seconds: 1, grace_seconds: 0 } });

    const down = await waitFor(
      "crash loop seen",
      () => session.call<HealthJson>("GET", `/console/api/apps/${app.id}`),
      (a) => a.health.state === "unhealthy" && !/answered HTTP 404/.test(a.health.last_failure?.message ?? ""),
      45_000,
    );
    expect(down.health.last_failure?.message).toMatch(/^(\/missing gave no HTTP answer: the connection was refused or reset\.|\/missing did not answer within 1 s\.|The restart failed: .*)$/);
    expect(JSON.stringify(down.health)).not.toMatch(/127\.0\.0\.1|crashing/);
    // A few more checks: still one container (restarts are in place), still unhealthy.
    await new Promise((r) => setTimeout(r, 4_000));
    expect(await containersOf(app.id)).toHaveLength(1);
    expect((await session.call<HealthJson>("GET", `/console/api/apps/${app.id}`)).health.state).toBe("unhealthy");
  }, 240_000);
});
