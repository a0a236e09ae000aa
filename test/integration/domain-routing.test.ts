import { runDurableObjectAlarm } from "cloudflare:test";
import { env, exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDomain } from "../../src/domains/store";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { setDns, uniqueHost } from "./domain-helpers";

// Issue 15, routing: the Host-based proxy also serves Active custom hostnames, and Verifying… ones
// once the route is in place; a pending, removed or unknown hostname does not reach the app (it
// falls through to the console, where `/` answers 404).

const get = (host: string, path = "/") => workerExports.default.fetch(new Request(`http://${host}${path}`, { headers: { Host: host } }));

describe("custom hostnames through the proxy", { timeout: 30_000 }, () => {
  it("serves the app from Verifying… on, and stops at once on removal while the app's own hostname serves", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(`routed-${Date.now() % 100000}`, httpdFiles("<p>routed</p>"));
    const subdomain = `routed-${Date.now() % 100000}`;
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Routed", repository, subdomain, plan: "starter" });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);

    const hostname = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname });
    const checker = env.DOMAIN_CHECKER.get(env.DOMAIN_CHECKER.idFromName((await getDomain(env, app.id, hostname))!.id));

    await setDns(hostname, [{ type: "CNAME", data: `${subdomain}.localhost` }]);
    await runDurableObjectAlarm(checker);
    expect((await getDomain(env, app.id, hostname))?.status).toBe("verifying");
    const verifying = await get(hostname);
    expect(verifying.status).toBe(200);
    expect(await verifying.text()).toBe("<p>routed</p>");

    await runDurableObjectAlarm(checker);
    expect((await getDomain(env, app.id, hostname))?.status).toBe("active");
    expect(await (await get(`${hostname.toUpperCase()}:443`)).text()).toBe("<p>routed</p>");

    await client.json("DELETE", `/console/api/apps/${app.id}/domains/${hostname}`);
    const removed = await get(hostname);
    expect(removed.status).toBe(404);
    expect(await removed.text()).not.toContain("routed");
    expect(await (await get(`${subdomain}.localhost`)).text()).toBe("<p>routed</p>");
  });

  it("does not serve a Pending DNS or Error hostname, nor an unknown one", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(`pending-${Date.now() % 100000}`, httpdFiles("<p>pending</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Pending", repository, plan: "pro" });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    const pending = uniqueHost();
    const failed = uniqueHost();
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname: pending });
    await client.json("POST", `/console/api/apps/${app.id}/domains`, { hostname: failed });
    await client.json("POST", `/console/api/apps/${app.id}/domains/${failed}/verify`);
    for (const host of [pending, failed, uniqueHost("unknown")]) {
      const res = await get(host);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("pending</p>");
    }
  });
});
