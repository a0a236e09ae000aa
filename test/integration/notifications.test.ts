import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deliverOnce, sweepDeliveries } from "../../src/notifications/deliver";
import { raiseEvent, settleIncident } from "../../src/notifications/raise";
import { type ConsoleClient, ConsoleClient as Client, signedUp } from "./helpers";

// Alerts (docs/alerts.md): channels per account through the console's JSON routes, the webhook's
// secret shown once, deliveries through the `notifications` queue to a stand-in receiver
// (test/fakes/fake-receiver.ts) that checks each signature, retries after a 500, one delivery
// per incident, and the last deliveries listed.

interface Channel {
  id: string;
  kind: string;
  url: string;
  events: string[];
  secret?: string;
}
interface Delivery {
  id: string;
  channel_id: string;
  event: string;
  status: string;
  status_code: number | null;
  attempts: number;
  error: string | null;
}
interface Received {
  json: { event: string; app: unknown; console_url: string; details: Record<string, unknown> };
  verified: boolean | null;
  answered: number;
}

let n = 0;
const inboxName = () => `inbox-${Date.now()}-${++n}`;
const hook = (inbox: string) => `${env.RECEIVER_URL}/hooks/${inbox}`;

async function setInbox(inbox: string, settings: { secret?: string; fail?: number }) {
  await fetch(`${env.RECEIVER_URL}/__control/${inbox}`, { method: "PUT", body: JSON.stringify(settings) });
}
async function received(inbox: string): Promise<Received[]> {
  return ((await (await fetch(`${env.RECEIVER_URL}/__control/${inbox}`)).json()) as { received: Received[] }).received;
}
async function until<T>(what: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await what();
    if (done(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
}
const deliveries = async (client: ConsoleClient, limit = 20) => (await client.json<{ deliveries: Delivery[] }>("GET", `/console/api/notifications/deliveries?limit=${limit}`)).deliveries;

/** A webhook channel to a fresh inbox that checks the channel's secret. */
async function webhookChannel(client: ConsoleClient, events: string[] = ["deploy.failed", "app.crashed"]) {
  const inbox = inboxName();
  const res = await client.call("POST", "/console/api/notifications/channels", { kind: "webhook", url: hook(inbox), events });
  expect(res.status).toBe(201);
  const channel = (await res.json()) as Channel;
  await setInbox(inbox, { secret: channel.secret! });
  return { channel, inbox };
}

/** The account a channel belongs to (the console has no route that names the signed-in account's id). */
async function accountOf(channel: Channel): Promise<string> {
  return (await env.DB.prepare("SELECT account_id FROM notification_channels WHERE id = ?").bind(channel.id).first<{ account_id: string }>())!.account_id;
}

describe("notification channels", { timeout: 60_000 }, () => {
  it.each<[string, unknown, string]>([
    ["no body fields", {}, "kind: "],
    ["an unknown kind", { kind: "email", url: "https://hooks.example.com/a", events: ["deploy.live"] }, "kind: "],
    ["no url", { kind: "webhook", events: ["deploy.live"] }, "url: "],
    ["a url that is not http", { kind: "webhook", url: "ftp://hooks.example.com/a", events: ["deploy.live"] }, "url: Give an https:// address."],
    ["a cloud metadata address", { kind: "webhook", url: "http://169.254.169.254/latest", events: ["deploy.live"] }, "url: Notifications are never sent to link-local"],
    ["credentials in the url", { kind: "slack", url: "https://u:p@hooks.example.com/a", events: ["deploy.live"] }, "url: The address may not hold"],
    ["no events", { kind: "webhook", url: "https://hooks.example.com/a", events: [] }, "events: Choose at least one event."],
    ["an unknown event", { kind: "webhook", url: "https://hooks.example.com/a", events: ["deploy.live", "app.exploded"] }, "events.1: Each event is one of"],
    ["an event twice", { kind: "discord", url: "https://hooks.example.com/a", events: ["deploy.live", "deploy.live"] }, "events: Name each event once."],
  ])("POST with %s answers 400 INVALID_REQUEST naming the field", async (_case, body, message) => {
    const client = await signedUp();
    const res = await client.call("POST", "/console/api/notifications/channels", body);
    expect(res.status).toBe(400);
    const json = (await res.json()) as { success: boolean; code: string; error: string };
    expect(json).toMatchObject({ success: false, code: "INVALID_REQUEST" });
    expect(json.error.startsWith(message)).toBe(true);
  });

  it.each<[string, string, string]>([
    ["limit=0", "/console/api/notifications/deliveries?limit=0", "limit: "],
    ["limit=101", "/console/api/notifications/deliveries?limit=101", "limit: "],
    ["limit=ten", "/console/api/notifications/deliveries?limit=ten", "limit: "],
    ["a channel id that is not one (delete)", "/console/api/notifications/channels/nope", "id: "],
  ])("%s answers 400 naming the parameter", async (_case, path, message) => {
    const client = await signedUp();
    const res = await client.call(path.endsWith("nope") ? "DELETE" : "GET", path);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error.startsWith(message)).toBe(true);
  });

  it("answers 401 without a session", async () => {
    expect((await new Client().call("GET", "/console/api/notifications/channels")).status).toBe(401);
    expect((await new Client().call("GET", "/console/api/notifications/deliveries")).status).toBe(401);
  });

  it("shows a webhook's secret once, stores it sealed, lists channels without it; chat channels have none", async () => {
    const client = await signedUp();
    const { channel } = await webhookChannel(client);
    expect(channel).toMatchObject({ kind: "webhook", events: ["deploy.failed", "app.crashed"] });
    expect(channel.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    const slack = await client.json<Channel>("POST", "/console/api/notifications/channels", { kind: "slack", url: "https://hooks.slack.example.com/services/T/B/x", events: ["deploy.live"] });
    expect("secret" in slack).toBe(false);
    const list = await client.json<{ channels: Channel[] }>("GET", "/console/api/notifications/channels");
    expect(list.channels.map((c) => c.id)).toEqual([channel.id, slack.id]);
    expect(list.channels.every((c) => !("secret" in c))).toBe(true);
    const row = await env.DB.prepare("SELECT secret FROM notification_channels WHERE id = ?").bind(channel.id).first<{ secret: string }>();
    expect(row!.secret).not.toContain(channel.secret!.slice(6));
    expect(JSON.parse(row!.secret)).toMatchObject({ kid: expect.any(String), iv: expect.any(String), ciphertext: expect.any(String) });
  });

  it("another account's channel answers 404 to delete and test, and is not listed", async () => {
    const owner = await signedUp();
    const stranger = await signedUp();
    const { channel } = await webhookChannel(owner);
    expect((await stranger.call("DELETE", `/console/api/notifications/channels/${channel.id}`)).status).toBe(404);
    expect((await stranger.call("POST", `/console/api/notifications/channels/${channel.id}/test`)).status).toBe(404);
    expect((await stranger.json<{ channels: Channel[] }>("GET", "/console/api/notifications/channels")).channels).toEqual([]);
    expect((await owner.call("DELETE", `/console/api/notifications/channels/${channel.id}`)).status).toBe(200);
    expect((await owner.json<{ channels: Channel[] }>("GET", "/console/api/notifications/channels")).channels).toEqual([]);
    expect((await owner.call("DELETE", `/console/api/notifications/channels/${channel.id}`)).status).toBe(404);
  });

  it("a test is delivered signed through the queue and listed with its status code and attempts; the audit log names the changes", async () => {
    const client = await signedUp();
    const { channel, inbox } = await webhookChannel(client);
    const res = await client.call("POST", `/console/api/notifications/channels/${channel.id}/test`);
    expect(res.status).toBe(202);
    const { delivery_id } = (await res.json()) as { delivery_id: string };
    const got = await until(() => received(inbox), (r) => r.length > 0);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ verified: true, answered: 200, json: { event: "test", app: null } });
    const listed = await until(() => deliveries(client), (d) => d[0]?.status === "delivered");
    expect(listed[0]).toMatchObject({ id: delivery_id, channel_id: channel.id, event: "test", status: "delivered", status_code: 200, attempts: 1, error: null });
    const audit = await client.json<{ entries: { action: string; resource: { kind: string; id: string } }[] }>("GET", "/console/api/audit?limit=10");
    expect(audit.entries.filter((e) => e.resource.kind === "channel").map((e) => [e.action, e.resource.id])).toEqual([
      ["channel.test", channel.id],
      ["channel.create", channel.id],
    ]);
  });

  it("a delivery answered 500 is retried after its backoff and then delivered", async () => {
    const client = await signedUp();
    const { channel, inbox } = await webhookChannel(client);
    await setInbox(inbox, { secret: channel.secret!, fail: 1 });
    await client.call("POST", `/console/api/notifications/channels/${channel.id}/test`);
    const first = await until(() => deliveries(client), (d) => d[0]?.attempts === 1 && d[0].status === "pending");
    expect(first[0]).toMatchObject({ status: "pending", status_code: 500, attempts: 1, error: "The receiver answered HTTP 500." });
    const done = await until(() => deliveries(client), (d) => d[0]?.status === "delivered", 40_000);
    expect(done[0]).toMatchObject({ status: "delivered", status_code: 200, attempts: 2, error: null });
    expect((await received(inbox)).map((r) => [r.verified, r.answered])).toEqual([
      [true, 500],
      [true, 200],
    ]);
  });

  it("the sixth failed try is the last: the delivery is recorded failed", async () => {
    const client = await signedUp();
    const { channel, inbox } = await webhookChannel(client);
    await setInbox(inbox, { secret: channel.secret!, fail: 100 });
    const account = await accountOf(channel);
    await raiseEvent(env, { event: "deploy.failed", accountId: account, key: "deploy:six", at: Date.now(), details: {} });
    const row = await env.DB.prepare("SELECT id FROM notification_deliveries WHERE channel_id = ?").bind(channel.id).first<{ id: string }>();
    // The queue's own message may take the first try; the rest are driven here without waiting out the backoff.
    const delays: (number | null)[] = [];
    for (let i = 0; i < 8; i++) {
      await env.DB.prepare("UPDATE notification_deliveries SET next_attempt_at = 0 WHERE id = ?").bind(row!.id).run();
      delays.push(await deliverOnce(env, row!.id, { now: Date.now }));
    }
    const listed = await deliveries(client);
    expect(listed[0]).toMatchObject({ status: "failed", attempts: 6, status_code: 500, error: "The receiver answered HTTP 500." });
    expect(delays.filter((d) => d === null).length).toBeGreaterThanOrEqual(3);
  });

  it("one delivery per incident key and channel; an incident sends on opening only, and again after it closed", async () => {
    const client = await signedUp();
    const { channel, inbox } = await webhookChannel(client, ["deploy.failed", "app.crashed"]);
    const account = await accountOf(channel);
    const app = { id: crypto.randomUUID(), name: "shop", subdomain: "shop" };
    const event = (key: string) => ({ event: "app.crashed" as const, accountId: account, app, key, at: Date.now(), details: { message: "Exit code 1." } });
    expect(await raiseEvent(env, { ...event("deploy:d1"), event: "deploy.failed" })).toBe(1);
    expect(await raiseEvent(env, { ...event("deploy:d1"), event: "deploy.failed" })).toBe(0);
    const steps = [];
    for (const holds of [true, true, true, false, false, true]) {
      steps.push(await settleIncident(env, { subject: app.id, kind: "crashed", holds, now: Date.now() + steps.length }, { opened: event }));
    }
    expect(steps).toEqual(["open", "stay", "stay", "close", "stay", "open"]);
    const got = await until(() => received(inbox), (r) => r.length >= 3);
    expect(got.map((r) => r.json.event).sort()).toEqual(["app.crashed", "app.crashed", "deploy.failed"]);
    expect(got.every((r) => r.verified === true)).toBe(true);
    expect(got.find((r) => r.json.event === "app.crashed")!.json).toMatchObject({ app: { id: app.id, name: "shop", url: "http://shop.localhost" }, console_url: `http://control.test/console/apps/${app.id}` });
    expect((await deliveries(client)).filter((d) => d.channel_id === channel.id)).toHaveLength(3);
  });

  it("the cron's sweep queues a delivery whose message was lost, fails one whose tries are spent, and drops finished ones after 30 days", async () => {
    const client = await signedUp();
    const { channel, inbox } = await webhookChannel(client);
    const account = await accountOf(channel);
    const now = Date.now();
    const row = (id: string, status: string, attempts: number, created: number, next: number) =>
      env.DB.prepare(
        "INSERT INTO notification_deliveries (id, account_id, channel_id, event, event_key, payload, status, attempts, created_at, updated_at, next_attempt_at) VALUES (?, ?, ?, 'deploy.failed', ?, ?, ?, ?, ?, ?, ?)",
      )
        .bind(id, account, channel.id, `k-${id}`, JSON.stringify({ event: "deploy.failed", at: new Date(created).toISOString(), app: null, console_url: "x", details: {} }), status, attempts, created, created, next)
        .run();
    const tag = `${now}`;
    await row(`lost-${tag}`, "pending", 0, now - 20 * 60_000, now - 20 * 60_000);
    await row(`spent-${tag}`, "pending", 6, now - 90 * 60_000, now - 20 * 60_000);
    await row(`recent-${tag}`, "pending", 1, now - 60_000, now + 60_000);
    await row(`old-${tag}`, "delivered", 1, now - 31 * 86_400_000, now - 31 * 86_400_000);
    await sweepDeliveries(env, now);
    const status = async (id: string) => (await env.DB.prepare("SELECT status FROM notification_deliveries WHERE id = ?").bind(id).first<{ status: string }>())?.status ?? "gone";
    expect(await until(() => status(`lost-${tag}`), (s) => s === "delivered")).toBe("delivered");
    expect(await status(`spent-${tag}`)).toBe("failed");
    expect(await status(`recent-${tag}`)).toBe("pending");
    expect(await status(`old-${tag}`)).toBe("gone");
    expect((await received(inbox)).map((r) => [r.json.event, r.verified])).toEqual([["deploy.failed", true]]);
  });

  it("a channel deleted before its delivery's try fails the delivery at once", async () => {
    const client = await signedUp();
    const { channel } = await webhookChannel(client);
    const account = await accountOf(channel);
    await client.call("DELETE", `/console/api/notifications/channels/${channel.id}`);
    // Raised while the channel existed: written by hand here as raiseEvent would have.
    await env.DB.prepare(
      "INSERT INTO notification_deliveries (id, account_id, channel_id, event, event_key, payload, status, attempts, created_at, updated_at, next_attempt_at) VALUES ('d-gone', ?, ?, 'deploy.failed', 'k', '{}', 'pending', 0, 1, 1, 1)",
    )
      .bind(account, channel.id)
      .run();
    expect(await deliverOnce(env, "d-gone", { now: Date.now })).toBe(null);
    const listed = await deliveries(client);
    expect(listed.find((d) => d.id === "d-gone")).toMatchObject({ status: "failed", attempts: 1, error: "The channel was deleted." });
  });
});
