import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runtimeLogsPrefix } from "../../src/logs/chunks";
import { type AppJson, httpdFiles, publishRepository, signedUpClient } from "./apps-helpers";
import type { ConsoleClient } from "./helpers";
import { type Line, SECRET, followers, liveApp, print, readEvents, unique } from "./logs-helpers";

// Live logs: the runtime output's JSON search and SSE stream, their ownership and parameters, the
// masking of env values, and what is kept. The engine is the fake Docker Engine (RUNTIME_URL);
// its test-only /fake routes make an instance print lines and count open follow calls.

async function search(client: ConsoleClient, appId: string, query = ""): Promise<Line[]> {
  return (await client.json<{ lines: Line[] }>("GET", `/console/api/apps/${appId}/logs${query}`)).lines;
}

describe("runtime logs", () => {
  it("keeps the instance's output, oldest first, with env values masked; searches by text, time and limit", async () => {
    const { client, app, instanceId } = await liveApp();
    await print(instanceId, "hello from the app");
    await print(instanceId, `using token ${SECRET} now`);
    await print(instanceId, "something failed", 2);
    await print(instanceId, "a b ab abc");
    const lines = await search(client, app.id);
    const texts = lines.map((l) => l.text);
    expect(texts.slice(-4)).toEqual(["hello from the app", "using token **** now", "something failed", "a b ab abc"]);
    expect(lines.at(-2)).toMatchObject({ stream: "stderr" });
    expect(JSON.stringify(lines)).not.toContain(SECRET);
    for (let i = 1; i < lines.length; i++) expect(lines[i]!.at).toBeGreaterThanOrEqual(lines[i - 1]!.at);

    expect((await search(client, app.id, "?q=FAILED")).map((l) => l.text)).toEqual(["something failed"]);
    expect((await search(client, app.id, "?limit=2")).map((l) => l.text)).toEqual(["something failed", "a b ab abc"]);
    const at = lines.at(-1)!.at;
    expect((await search(client, app.id, `?since=${at + 60_000}`))).toEqual([]);
    expect((await search(client, app.id, `?until=${new Date(lines[0]!.at - 60_000).toISOString()}`))).toEqual([]);
    expect((await search(client, app.id, `?since=${new Date(lines[0]!.at).toISOString()}&until=${at}`)).length).toBe(lines.length);
    // Asking again does not keep a line twice.
    expect(await search(client, app.id)).toEqual(lines);
  });

  it.each([
    ["?limit=0", "limit"],
    ["?limit=1001", "limit"],
    ["?limit=ten", "limit"],
    ["?since=yesterday", "since"],
    ["?until=12abc", "until"],
    ["?since=2000&until=1000", "until"],
    [`?q=${"x".repeat(201)}`, "q"],
  ])("answers 400 naming the field for %s", async (query, field) => {
    const { client, app } = await liveApp();
    const res = await client.call("GET", `/console/api/apps/${app.id}/logs${query}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { success: boolean; code: string; error: string };
    expect(body).toMatchObject({ success: false, code: "INVALID_REQUEST" });
    expect(body.error.startsWith(`${field}:`)).toBe(true);
  });

  it("answers 404 to another account, for the search and the stream, as for a missing app", async () => {
    const { app, instanceId } = await liveApp();
    await print(instanceId, "private line");
    const other = await signedUpClient();
    for (const path of [`/console/api/apps/${app.id}/logs`, `/console/api/apps/${app.id}/logs/stream`, "/console/api/apps/no-such-app/logs"]) {
      const res = await other.call("GET", path);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("private line");
    }
    expect(await followers(instanceId)).toBe(0);
  });

  it("keeps the last 10,000 lines in R2 chunks under a flood, and cuts a huge line", async () => {
    const { client, app, instanceId } = await liveApp();
    const flood = Array.from({ length: 12_000 }, (_, i) => `line ${i}`);
    for (let i = 0; i < flood.length; i += 3000) await print(instanceId, flood.slice(i, i + 3000).join("\n"));
    await print(instanceId, "y".repeat(100_000));
    const last = await search(client, app.id, "?limit=1000");
    expect(last).toHaveLength(1000);
    expect(last.at(-1)!.text.endsWith("[line cut]")).toBe(true);
    expect(last.at(-1)!.text.length).toBeLessThan(17_000);
    expect(last.at(-2)!.text).toBe("line 11999");
    // R2 holds chunks of at most 500 lines, together at most the last 10,000 lines (plus the newest chunk's worth).
    const listed = await env.LOGS.list({ prefix: runtimeLogsPrefix(app.id) });
    let kept = 0;
    for (const object of listed.objects) {
      const lines = (await (await env.LOGS.get(object.key))!.text()).trimEnd().split("\n");
      expect(lines.length).toBeLessThanOrEqual(500);
      kept += lines.length;
    }
    expect(kept).toBeGreaterThanOrEqual(9_500);
    expect(kept).toBeLessThanOrEqual(10_500);
    expect((await search(client, app.id, "?q=LINE%2011998&limit=5")).map((l) => l.text)).toEqual(["line 11998"]);
  }, 30_000);
});

describe("the app page's Logs section", () => {
  it("shows the last lines escaped and masked, and answers its search form without JavaScript", async () => {
    const { client, app, instanceId } = await liveApp();
    await print(instanceId, "<script>alert(1)</script>");
    await print(instanceId, `find me ${SECRET}`);
    // The page shows what is kept (collected every few seconds, or by a search).
    await search(client, app.id);
    // The Environment section shows the owner the values; the Logs section never does.
    const logsSection = (html: string) => html.slice(html.indexOf('id="logs"'), html.indexOf("</section>", html.indexOf('id="logs"')));
    const page = logsSection(await (await client.call("GET", `/console/apps/${app.id}/logs`)).text());
    expect(page).toContain('id="logs"');
    expect(page).toContain(`data-logs-stream="/console/api/apps/${app.id}/logs/stream"`);
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).toContain("find me ****");
    expect(page).not.toContain(SECRET);

    const found = logsSection(await (await client.call("GET", `/console/apps/${app.id}/logs?q=FIND`)).text());
    expect(found).toContain("1 line found.");
    expect(found).toContain("find me ****");
    expect(found).not.toContain("alert(1)");
    expect(found).toContain('data-searching="true"');

    const bad = await (await client.call("GET", `/console/apps/${app.id}/logs?since=someday`)).text();
    expect(bad).toContain("since: must be a time");
    // A search made on the app's page before the logs had their own tab is answered there.
    const old = await client.call("GET", `/console/apps/${app.id}?q=FIND`);
    expect([old.redirected, old.url]).toEqual([true, `${new URL(old.url).origin}/console/apps/${app.id}/logs?q=FIND`]);
    expect(logsSection(await old.text())).toContain("1 line found.");
  });
});

describe("live log stream (SSE)", () => {
  it("sends the backlog and new lines as events with ids, masked; resumes after Last-Event-ID with no duplicate", async () => {
    const { client, app, instanceId } = await liveApp();
    await print(instanceId, "before one");
    await print(instanceId, "before two");
    const res = await client.call("GET", `/console/api/apps/${app.id}/logs/stream`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    const first = await readEvents(res.body!, (e) => e.some((x) => x.data.text === "before two"));
    await print(instanceId, `after with ${SECRET}`);
    const more = await readEvents(first.reader, (e) => e.some((x) => x.data.text.startsWith("after")));
    const after = more.events.find((x) => x.data.text.startsWith("after"))!;
    expect(after.data).toMatchObject({ stream: "stdout", text: "after with ****" });
    await first.reader.cancel();

    // Reconnect after "before two": exactly the lines after it come, once each.
    const two = first.events.find((x) => x.data.text === "before two")!;
    await print(instanceId, "while away");
    const again = await client.call("GET", `/console/api/apps/${app.id}/logs/stream`, undefined, { "Last-Event-ID": two.id });
    const resumed = await readEvents(again.body!, (e) => e.some((x) => x.data.text === "while away"));
    expect(resumed.events.map((x) => x.data.text)).toEqual(["after with ****", "while away"]);
    await resumed.reader.cancel();
  });

  it("ends the engine's follow call when the client goes away", async () => {
    const { client, app, instanceId } = await liveApp();
    const res = await client.call("GET", `/console/api/apps/${app.id}/logs/stream`);
    const reader = res.body!.getReader();
    await reader.read();
    expect(await followers(instanceId)).toBe(1);
    await reader.cancel();
    const deadline = Date.now() + 5_000;
    while ((await followers(instanceId)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await followers(instanceId)).toBe(0);
  });

  it("asks a client of an app with no instance to come back later, and ends", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("idle"), httpdFiles("<p>idle</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Idle", repository, subdomain: unique("idle") });
    const res = await client.call("GET", `/console/api/apps/${app.id}/logs/stream`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("retry: 5000\n\n");
    expect(await search(client, app.id)).toEqual([]);
  });
});
