import { env, exports as workerExports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { database } from "../../src/db/client";
import { deploys } from "../../src/db/schema";
import { APP_ID_LABEL } from "../../src/apps/launch";
import { DockerRuntime } from "../../src/runtime";
import { eq } from "drizzle-orm";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Issue 12, App controls (SPEC.md, App controls): one deploy at a time under concurrent presses,
// refusals while a change is in flight, Delete during a deploy fails generically. The container
// engine is the fake Docker Engine at its HTTP boundary (RUNTIME_URL), the forge a stand-in.

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

async function newApp(files = httpdFiles("<p>hello</p>")) {
  const client = await signedUpClient();
  const repository = await publishRepository(unique("repo"), files);
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Web", repository, subdomain: unique("web") });
  return { client, app };
}

describe("AppController", () => {
  it("deploys, switches traffic and serves the app at its hostname through the Worker", async () => {
    const { client, app } = await newApp();
    const res = await client.call("POST", `/console/api/apps/${app.id}/deploy`);
    expect(res.status).toBe(202);
    const live = await waitForDeploy(client, app.id);
    expect(live).toMatchObject({ status: "running", latest_deploy: { status: "live" } });
    const page = await workerExports.default.fetch(new Request(`http://${app.subdomain}.localhost/`));
    expect(page.status).toBe(200);
    expect(await page.text()).toBe("<p>hello</p>");
  });

  it("starts exactly one deploy however many presses race; each press answers 202 with that deploy", async () => {
    const { client, app } = await newApp(httpdFiles("<p>slow</p>", { buildSeconds: 2 }));
    const replies = await Promise.all(Array.from({ length: 10 }, () => client.call("POST", `/console/api/apps/${app.id}/deploy`)));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(202));
    const ids = new Set(await Promise.all(replies.map(async (r) => ((await r.json()) as { deploy: { id: string } }).deploy.id)));
    expect(ids.size).toBe(1);
    const rows = await database(env).select().from(deploys).where(eq(deploys.appId, app.id));
    expect(rows).toHaveLength(1);
    await waitForDeploy(client, app.id);
  });

  it("refuses Stop, Restart and Change plan while a deploy runs, and Delete fails generically", async () => {
    const { client, app } = await newApp(httpdFiles("<p>slow</p>", { buildSeconds: 3 }));
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    for (const [path, body] of [["stop"], ["restart"], ["plan", { plan: "pro" }]] as const) {
      const res = await client.call("POST", `/console/api/apps/${app.id}/${path}`, body);
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual({ success: false, code: "CHANGE_IN_FLIGHT", error: "Another change to this app is being applied. Try again in a moment." });
    }
    const del = await client.call("DELETE", `/console/api/apps/${app.id}`);
    expect(del.status).toBe(409);
    expect(await del.json()).toEqual({ success: false, code: "DELETE_FAILED", error: "The app could not be deleted." });
    const after = await waitForDeploy(client, app.id);
    expect(after.plan).toBe("lite");
    expect(after.status).toBe("running");
  });

  it("answers INVALID_STATE for a control that does not apply, and 404 for another account's app", async () => {
    const { client, app } = await newApp();
    const start = await client.call("POST", `/console/api/apps/${app.id}/start`);
    expect(start.status).toBe(409);
    expect(((await start.json()) as { code: string }).code).toBe("INVALID_STATE");
    const stranger = await signedUpClient();
    for (const [method, path] of [["GET", ""], ["POST", "/deploy"], ["POST", "/stop"], ["DELETE", ""]] as const) {
      const res = await stranger.call(method, `/console/api/apps/${app.id}${path}`);
      expect(res.status).toBe(404);
    }
  });

  it("stops, starts, restarts, changes plan and deletes a running app", async () => {
    const { client, app } = await newApp();
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const host = (path = "/") => workerExports.default.fetch(new Request(`http://${app.subdomain}.localhost${path}`));
    expect((await client.json<AppJson>("POST", `/console/api/apps/${app.id}/stop`)).status).toBe("stopped");
    expect((await host()).status).toBe(503);
    expect((await client.json<AppJson>("POST", `/console/api/apps/${app.id}/start`)).status).toBe("running");
    expect((await host()).status).toBe(200);
    expect((await client.json<AppJson>("POST", `/console/api/apps/${app.id}/restart`)).status).toBe("running");
    expect((await host()).status).toBe(200);
    expect((await client.json<AppJson>("POST", `/console/api/apps/${app.id}/plan`, { plan: "pro" })).plan).toBe("pro");
    expect((await host()).status).toBe(200);
    expect((await client.call("DELETE", `/console/api/apps/${app.id}`)).status).toBe(200);
    expect((await host()).status).toBe(404);
    expect((await client.call("GET", `/console/api/apps/${app.id}`)).status).toBe(404);
  });

  it("answers a plan change at the switch: the old instance drains in the background, and the next control is not refused meanwhile", async () => {
    const { client, app } = await newApp();
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const runtime = new DockerRuntime({ url: env.RUNTIME_URL });
    const labels = { [APP_ID_LABEL]: app.id };
    const [before] = await runtime.instances(labels);
    expect((await client.json<AppJson>("POST", `/console/api/apps/${app.id}/plan`, { plan: "pro" })).plan).toBe("pro");
    // DRAIN_SECONDS is 2 in these tests: the replaced instance still drains when the answer comes.
    expect(await runtime.instances(labels)).toContain(before);
    expect((await client.json<AppJson>("POST", `/console/api/apps/${app.id}/stop`)).status).toBe("stopped");
    await vi.waitFor(async () => expect(await runtime.instances(labels)).not.toContain(before), { timeout: 15_000, interval: 200 });
  });

  it("refuses bad settings naming the field, a taken subdomain, and a subdomain change after the first deploy", async () => {
    const { client, app } = await newApp();
    const bad = async (body: Record<string, unknown>, message: string) => {
      const res = await client.call("POST", "/console/api/apps", { name: "X", repository: "https://example.com/acme/x", ...body });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: message });
    };
    await bad({ subdomain: "ab" }, "subdomain: A subdomain is 3 to 63 characters long.");
    await bad({ subdomain: "app-mine" }, 'subdomain: Subdomains starting with "app-" are kept for generated names.');
    await bad({ subdomain: app.subdomain }, "subdomain: This subdomain is already in use. Choose another.");
    await bad({ root_directory: "../up" }, 'root_directory: Root directory "../up" leads outside the repository.');
    await bad({ plan: "gold" }, "plan: Choose a plan: lite, starter, pro.");

    const renamed = unique("renamed");
    expect((await client.json<AppJson>("PATCH", `/console/api/apps/${app.id}`, { subdomain: renamed })).subdomain).toBe(renamed);
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const late = await client.call("PATCH", `/console/api/apps/${app.id}`, { subdomain: unique("late") });
    expect(late.status).toBe(400);
    expect(((await late.json()) as { error: string }).error).toBe("subdomain: The subdomain can only be changed until the first deploy.");
  });
});
