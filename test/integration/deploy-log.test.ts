import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DeployLog, MAX_LOG_BYTES, deployLogKey, deployLogPrefix, readDeployLog } from "../../src/apps/deploy-log";
import { secretsToMask } from "../../src/logs/mask";
import { type AppJson, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Deploy logs stream while the deploy runs: appended as small parts (never one object rewritten),
// read back joined, env values masked, and sent as SSE line by line.

const SECRET = "deploy-secret-7781";
let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

describe("DeployLog parts", () => {
  it("writes each part once under the deploy's folder, keeps start and end past MAX_LOG_BYTES, masks env values", async () => {
    const appId = unique("app");
    const deployId = unique("deploy");
    const prefix = deployLogPrefix(appId, deployId);
    let now = 0;
    const puts: string[] = [];
    const put = env.LOGS.put.bind(env.LOGS);
    const bucket = new Proxy(env.LOGS, { get: (t, k) => (k === "put" ? (key: string, body: string) => (puts.push(key), put(key, body)) : Reflect.get(t, k)) });
    const watched = new DeployLog(bucket, prefix, () => now);
    watched.mask(secretsToMask([SECRET]));
    await watched.step("Building image");
    for (let i = 0; i < 3000; i++) {
      now += 10;
      await watched.append(`output line ${i} ${"z".repeat(700)} ${i === 5 ? SECRET : ""}`);
    }
    await watched.append("the last line");
    await watched.flush();
    expect(new Set(puts).size).toBe(puts.length);
    const text = await readDeployLog(env.LOGS, appId, deployId);
    expect(text.slice(0, 33)).toBe("==> Building image\noutput line 0 ");
    expect(text).toContain("output line 5 ");
    expect(text).not.toContain(SECRET);
    expect(text).toContain("****");
    expect(text).toMatch(/\[\.\.\. \d+ characters of output left out \.\.\.\]/);
    expect(text.slice(-40)).toMatch(/the last line\n$/);
    expect(text.length).toBeLessThanOrEqual(MAX_LOG_BYTES + 100);
  });

  it("still reads a log written whole by an earlier version", async () => {
    const appId = unique("old");
    await env.LOGS.put(deployLogKey(appId, "d1"), "==> Old log\n");
    expect(await readDeployLog(env.LOGS, appId, "d1")).toBe("==> Old log\n");
    expect(await readDeployLog(env.LOGS, appId, "d2")).toBe("");
  });
});

describe("deploy log routes", () => {
  async function deployed() {
    const client = await signedUpClient();
    const files = {
      Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "sh", "-c", "echo token is $API_TOKEN; exec /bin/busybox httpd -f -p 0.0.0.0:8080 -h /www"]\n`,
      busybox: "fake busybox",
      "www/index.html": "<p>deploy log</p>",
    };
    const repository = await publishRepository(unique("dlog"), files);
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Deploy log", repository, subdomain: unique("dlog") });
    await client.json("PUT", `/console/api/apps/${app.id}/env`, { version: 0, variables: [{ key: "API_TOKEN", value: SECRET }] });
    const { deploy } = await client.json<{ deploy: { id: string } }>("POST", `/console/api/apps/${app.id}/deploy`);
    return { client, app, deployId: deploy.id };
  }

  it("streams the deploy's lines as SSE while it runs and ends with `end`; the text route joins the parts; no secret anywhere", async () => {
    const { client, app, deployId } = await deployed();
    const res = await client.call("GET", `/console/api/apps/${app.id}/deploys/${deployId}/log/stream`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    const body = await res.text();
    expect(body.trimEnd().endsWith("event: end\ndata: {}")).toBe(true);
    const events = [...body.matchAll(/^id: (.*)\ndata: (.*)$/gm)].map((m) => ({ id: m[1]!, text: (JSON.parse(m[2]!) as { text: string }).text }));
    expect(events.some((e) => e.text === "token is ****")).toBe(true);
    expect((await waitForDeploy(client, app.id)).latest_deploy?.status).toBe("live");
    const text = await (await client.call("GET", `/console/api/apps/${app.id}/deploys/${deployId}/log`)).text();
    expect(events.map((e) => e.text).join("\n")).toBe(text.trimEnd());
    expect(text).not.toContain(SECRET);
    const parts = await env.LOGS.list({ prefix: deployLogPrefix(app.id, deployId) });
    expect(parts.objects.length).toBeGreaterThanOrEqual(1);
    expect(await env.LOGS.head(deployLogKey(app.id, deployId))).toBeNull();

    // Resuming after an event sends exactly the lines after it.
    const middle = events[Math.floor(events.length / 2)]!;
    const again = await (await client.call("GET", `/console/api/apps/${app.id}/deploys/${deployId}/log/stream`, undefined, { "Last-Event-ID": middle.id })).text();
    const resumed = [...again.matchAll(/^id: (.*)$/gm)].map((m) => m[1]);
    expect(resumed).toEqual(events.slice(events.indexOf(middle) + 1).map((e) => e.id));
  });

  it("answers 404 to another account and for a missing deploy", async () => {
    const { app, deployId, client } = await deployed();
    await waitForDeploy(client, app.id);
    const other = await signedUpClient();
    expect((await other.call("GET", `/console/api/apps/${app.id}/deploys/${deployId}/log/stream`)).status).toBe(404);
    expect((await client.call("GET", `/console/api/apps/${app.id}/deploys/no-such-deploy/log/stream`)).status).toBe(404);
  });
});
