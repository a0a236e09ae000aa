/**
 * The disk allowance end to end, on the machine's real dockerd: an instance that writes past its
 * allowance is restarted fresh by the cron's disk watchdog (a new container from the same image, so
 * what it wrote is gone), and the app's JSON and page say why. The allowance here is the test
 * setting DISK_ALLOWANCE_OVERRIDE_BYTES (10 MiB, a 20 MiB write), not a plan's 2 GiB: the rule
 * with the plans' own numbers (a 3 GiB write on Lite) is the table test test/unit/disk-watch.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepository } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, BUSYBOX, curlApp, deployAndWait, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

const ALLOWANCE = 10 * 1024 * 1024;
const REASON = "Restarted: the instance wrote more than its 10 MiB of disk.";

let stack: AppsStack;
let session: ConsoleSession;

beforeAll(async () => {
  stack = await startAppsStack({ DISK_ALLOWANCE_OVERRIDE_BYTES: String(ALLOWANCE) }, { testScheduled: true });
  session = await signedUp(stack.worker.url);
}, 900_000);

afterAll(async () => {
  const { apps } = session ? await session.call<{ apps: AppJson[] }>("GET", "/console/api/apps").catch(() => ({ apps: [] as AppJson[] })) : { apps: [] as AppJson[] };
  for (const app of apps) await session.call("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  await stack?.stop();
});

const cgi = (lines: string[]) => ["#!/bin/busybox sh", "printf 'Content-Type: text/plain\\r\\n\\r\\n'", ...lines, ""].join("\n");

/** The serving container's id, as the engine lists it. */
async function containerOf(appId: string): Promise<string[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`control-plane.app_id=${appId}`], status: ["running"] }));
  return ((await (await fetch(`${stack.engineUrl}/containers/json?filters=${filters}`)).json()) as { Id: string }[]).map((c) => c.Id);
}

describe("an instance's disk allowance", () => {
  it("an instance that writes past it is restarted fresh, and the app says why", async () => {
    const name = `disk-${Date.now() % 100000}`;
    const files = {
      Dockerfile: 'FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "httpd", "-f", "-p", "0.0.0.0:8080", "-h", "/www"]\n',
      busybox: BUSYBOX,
      "www/index.html": "disk-page",
      "www/cgi-bin/fill": cgi(["/bin/busybox dd if=/dev/zero of=/filler bs=1048576 count=20 2>&1 | /bin/busybox tail -n 1", "echo wrote"]),
      "www/cgi-bin/look": cgi(["/bin/busybox ls /filler 2>&1 || echo none"]),
    };
    const modes = { busybox: 0o755, "www/cgi-bin/fill": 0o755, "www/cgi-bin/look": 0o755 };
    const repo = await createRepository(stack.forgeRoot, "acme", name, files, { branch: "main", modes, forgeUrl: stack.forgeUrl });
    const created = await session.call<AppJson>("POST", "/console/api/apps", { name, repository: repo, subdomain: name });
    const live = await deployAndWait(session, created.id, 180_000);
    expect(live.latest_deploy, JSON.stringify(live.latest_deploy)).toMatchObject({ status: "live" });
    const before = await containerOf(created.id);
    expect(before).toHaveLength(1);

    // Within the allowance, the cron leaves it alone.
    await (await fetch(`${stack.worker.url}/__scheduled`)).text();
    expect(await containerOf(created.id)).toEqual(before);
    expect((await session.call<{ last_restart: unknown }>("GET", `/console/api/apps/${created.id}`)).last_restart).toBeNull();

    expect((await curlApp(stack, name, "/cgi-bin/fill")).body).toContain("wrote");
    expect((await curlApp(stack, name, "/cgi-bin/look")).body).toContain("/filler");
    await (await fetch(`${stack.worker.url}/__scheduled`)).text();

    // A new container of the same image, serving, without the file.
    const after = await containerOf(created.id);
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before[0]);
    expect((await curlApp(stack, name, "/")).body).toContain("disk-page");
    expect((await curlApp(stack, name, "/cgi-bin/look")).body).toContain("none");

    const app = await session.call<{ status: string; last_restart: { at: string; reason: string } | null }>("GET", `/console/api/apps/${created.id}`);
    expect(app.status).toBe("running");
    expect(app.last_restart).toMatchObject({ reason: REASON });
    expect(Date.parse(app.last_restart!.at)).toBeGreaterThan(Date.now() - 10 * 60_000);
    const page = await session.page(`/console/apps/${created.id}`);
    expect(page).toContain(REASON);
  }, 400_000);
});
