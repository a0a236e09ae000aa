import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SLOW_LAG_LINES } from "../../src/logs/live-feed";
import { liveLogs } from "../../src/logs/live-logs";
import { waitForDeploy } from "./apps-helpers";
import { type Event, followers, followersSettle, instanceOf, liveApp, print, readEvents } from "./logs-helpers";

// One engine follow per instance, shared by every viewer of it (src/logs/live-logs.ts), against
// the fake Docker Engine, which counts the open `logs?follow=1` calls of each instance.

const texts = (events: Event[]) => events.map((e) => e.data.text);

describe("live log streams of one instance share one engine follow", { timeout: 60_000 }, () => {
  it("three streams hold one follow and get the same lines with the same ids; a resume gets only later lines; closing all ends the follow", async () => {
    const { client, app, instanceId } = await liveApp();
    await print(instanceId, "before");
    const path = `/console/api/apps/${app.id}/logs/stream`;
    const opened = await Promise.all([1, 2, 3].map(() => client.call("GET", path)));
    expect(opened.map((r) => r.status)).toEqual([200, 200, 200]);
    const firsts = await Promise.all(opened.map((r) => readEvents(r.body!, (e) => e.some((x) => x.data.text === "before"))));
    expect(await followers(instanceId)).toBe(1);

    await print(instanceId, "one\ntwo\nthree");
    const seen = await Promise.all(firsts.map((f) => readEvents(f.reader, (e) => e.some((x) => x.data.text === "three"))));
    const all = firsts.map((f, i) => [...f.events, ...seen[i]!.events]);
    expect(texts(all[0]!).slice(-4)).toEqual(["before", "one", "two", "three"]);
    expect(all[1]).toEqual(all[0]);
    expect(all[2]).toEqual(all[0]);

    // A fourth viewer resuming after "one" gets exactly what came after it, from the same follow.
    const one = all[0]!.find((e) => e.data.text === "one")!;
    const fourth = await client.call("GET", path, undefined, { "Last-Event-ID": one.id });
    await print(instanceId, "four");
    const resumed = await readEvents(fourth.body!, (e) => e.some((x) => x.data.text === "four"));
    expect(texts(resumed.events)).toEqual(["two", "three", "four"]);
    expect(resumed.events.slice(0, 2)).toEqual(all[0]!.slice(-2));
    expect(await followers(instanceId)).toBe(1);

    for (const f of [...firsts, resumed]) await f.reader.cancel();
    expect(await followersSettle(instanceId, 0)).toBe(0);
  });

  it("a viewer that does not read is closed without holding lines for the others, and resumes where it was", async () => {
    const { client, app, instanceId } = await liveApp();
    const path = `/console/api/apps/${app.id}/logs/stream`;
    const reading = await client.call("GET", path);
    const stuck = await client.call("GET", path);
    const stuckReader = stuck.body!.getReader();
    await stuckReader.read();
    // Long lines, well past what the connections between here and the object hold in flight
    // (the stuck viewer takes a few lines, then falls SLOW_LAG_LINES behind).
    const total = 3 * SLOW_LAG_LINES;
    const filler = "x".repeat(400);
    const got = readEvents(reading.body!, (e) => e.some((x) => x.data.text.startsWith(`line ${total - 1} `)), 30_000);
    for (let i = 0; i < total; i += 500) await print(instanceId, Array.from({ length: 500 }, (_, k) => `line ${i + k} ${filler}`).join("\n"));
    const { events, reader } = await got;
    const printed = events.filter((e) => e.data.text.startsWith("line "));
    expect(printed.map((e) => e.data.text)).toEqual(Array.from({ length: total }, (_, i) => `line ${i} ${filler}`));

    // The stuck viewer's stream has ended after what it had been given (fewer lines than printed).
    const rest = await readEvents(stuckReader, () => false, 20_000);
    expect(rest.done).toBe(true);
    const stuckPrinted = rest.events.filter((e) => e.data.text.startsWith("line "));
    expect(stuckPrinted.length).toBeLessThan(total);
    expect(stuckPrinted).toEqual(printed.slice(0, stuckPrinted.length));

    // Its EventSource would come back with its last id: it gets the rest, no gap, no line twice.
    const last = rest.events.at(-1);
    const back = await client.call("GET", path, undefined, last ? { "Last-Event-ID": last.id } : {});
    const again = await readEvents(back.body!, (e) => e.some((x) => x.data.text.startsWith(`line ${total - 1} `)), 20_000);
    const rejoined = [...stuckPrinted, ...again.events.filter((e) => e.data.text.startsWith("line "))];
    expect(rejoined).toEqual(printed);
    expect(await followers(instanceId)).toBe(1);
    await reader.cancel();
    await again.reader.cancel();
    expect(await followersSettle(instanceId, 0)).toBe(0);
  });

  it("every stream ends when a deploy replaces the instance; a reconnect follows the new instance from its start", async () => {
    const { client, app, instanceId } = await liveApp();
    await print(instanceId, "old instance");
    const path = `/console/api/apps/${app.id}/logs/stream`;
    const streams = await Promise.all([1, 2].map(async () => readEvents((await client.call("GET", path)).body!, (e) => e.some((x) => x.data.text === "old instance"))));
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    expect((await waitForDeploy(client, app.id)).latest_deploy?.status).toBe("live");
    const next = await instanceOf(app.id);
    expect(next).not.toBe(instanceId);
    for (const s of streams) expect((await readEvents(s.reader, () => false)).done).toBe(true);

    await print(next, "new instance");
    const lastOld = streams[0]!.events.at(-1)!;
    const back = await client.call("GET", path, undefined, { "Last-Event-ID": lastOld.id });
    const fresh = await readEvents(back.body!, (e) => e.some((x) => x.data.text === "new instance"));
    expect(texts(fresh.events)).not.toContain("old instance");
    expect(fresh.events.at(-1)!.id.endsWith(next.slice(0, 12))).toBe(true);
    expect(await followers(next)).toBe(1);
    await fresh.reader.cancel();
    expect(await followersSettle(next, 0)).toBe(0);
  });

  it("a viewer whose request died without saying so is dropped at the object's next write, and the follow ends", async () => {
    const { app, instanceId } = await liveApp();
    // The object's stream as a viewer's request gets it; the request then goes away without `leave`.
    const stream = await liveLogs(env, app.id, instanceId).stream({ appId: app.id, instanceId, viewer: "gone", resume: null });
    const reader = stream!.getReader();
    await reader.read();
    expect(await followers(instanceId)).toBe(1);
    await reader.cancel();
    // Nothing written yet: the object cannot tell. A line (or the keep-alive, every 15 s) tells it.
    await print(instanceId, "anyone there?");
    expect(await followersSettle(instanceId, 0)).toBe(0);
  });
});
