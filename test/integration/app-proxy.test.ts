import { env, exports as workerExports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { apps } from "../../src/db/schema";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Issue 12, "Serving apps" and App controls: the proxy remembers where a running app leads for a
// moment (src/routing/route-cache.ts). Each control below comes right after the hostname answered,
// so the route is remembered when the next request arrives: the answer must still be what D1 says
// now (Stop: 503, Start/Restart/Change plan: the app, Delete: 404). The engine is the fake Docker
// Engine at its HTTP boundary.

describe("app proxy after a control", () => {
  it("answers from the app's state now, not from the route it remembered", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(`proxy-${Date.now() % 100000}`, httpdFiles("<p>proxied</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Proxied", repository });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const host = () => workerExports.default.fetch(new Request(`http://${app.subdomain}.localhost/`));
    const instance = async () => (await database(env).select({ id: apps.instanceId }).from(apps).where(eq(apps.id, app.id)).get())?.id;

    expect((await host()).status).toBe(200);
    await client.json("POST", `/console/api/apps/${app.id}/stop`);
    expect((await host()).status).toBe(503);

    await client.json("POST", `/console/api/apps/${app.id}/start`);
    const res = await host();
    expect([res.status, await res.text()]).toEqual([200, "<p>proxied</p>"]);

    const beforePlan = await instance();
    await client.json("POST", `/console/api/apps/${app.id}/plan`, { plan: "pro" });
    expect(await instance()).not.toBe(beforePlan);
    const moved = await host();
    expect([moved.status, await moved.text()]).toEqual([200, "<p>proxied</p>"]);

    expect((await client.call("DELETE", `/console/api/apps/${app.id}`)).status).toBe(200);
    expect((await host()).status).toBe(404);
  }, 30_000);
});
