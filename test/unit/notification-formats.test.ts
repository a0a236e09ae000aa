import { describe, expect, it } from "vitest";
import { buildPayload } from "../../src/notifications/events";
import { discordBody, outgoingRequest, slackBody, summary } from "../../src/notifications/formats";
import { signatureHeaders, verifySignature } from "../../src/notifications/signing";

// docs/alerts.md: the webhook body is {event, at, app: {id, name, url}, console_url, details},
// signed as X-Signature-256: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>"> with
// X-Webhook-Timestamp: <unix seconds>; Slack gets {text, blocks}, Discord {content, embeds}
// (their incoming-webhook documentation).

const APP = { id: "11111111-2222-4333-8444-555555555555", name: "shop", subdomain: "shop-a1" };
const AT = Date.UTC(2026, 10, 27, 12, 0, 0);

describe("signatureHeaders", () => {
  it("matches a known HMAC-SHA256 vector (computed with Python's hmac module)", async () => {
    expect(await signatureHeaders("whsec_test", 1700000000, '{"event":"deploy.failed"}')).toEqual({
      "X-Webhook-Timestamp": "1700000000",
      "X-Signature-256": "sha256=305833317ecee5fe6952eba3dbca7e1f08c6d212c58c93f3ffd9ab53cf19cd99",
    });
  });

  it.each<[string, string, string | null, string, number, boolean]>([
    // case, timestamp, signature, body, now -> verified
    ["the signed body", "1700000000", "sha256=305833317ecee5fe6952eba3dbca7e1f08c6d212c58c93f3ffd9ab53cf19cd99", '{"event":"deploy.failed"}', 1700000100, true],
    ["another body", "1700000000", "sha256=305833317ecee5fe6952eba3dbca7e1f08c6d212c58c93f3ffd9ab53cf19cd99", '{"event":"deploy.live"}', 1700000100, false],
    ["another timestamp", "1700000001", "sha256=305833317ecee5fe6952eba3dbca7e1f08c6d212c58c93f3ffd9ab53cf19cd99", '{"event":"deploy.failed"}', 1700000100, false],
    ["a replay 10 minutes later", "1700000000", "sha256=305833317ecee5fe6952eba3dbca7e1f08c6d212c58c93f3ffd9ab53cf19cd99", '{"event":"deploy.failed"}', 1700000600, false],
    ["no prefix", "1700000000", "305833317ecee5fe6952eba3dbca7e1f08c6d212c58c93f3ffd9ab53cf19cd99", '{"event":"deploy.failed"}', 1700000100, false],
    ["no signature", "1700000000", null, '{"event":"deploy.failed"}', 1700000100, false],
  ])("verifySignature: %s", async (_case, timestamp, signature, body, now, ok) => {
    expect(await verifySignature("whsec_test", { timestamp, signature }, body, now)).toBe(ok);
  });
});

describe("buildPayload", () => {
  it.each<[string, Parameters<typeof buildPayload>[0], string, unknown]>([
    [
      "an app's event: the app's address on the console's scheme and port, the app page",
      { event: "deploy.failed", at: AT, app: APP, details: { deploy_id: "d1", message: "The build failed." } },
      "http://localhost:8787",
      {
        event: "deploy.failed",
        at: "2026-11-27T12:00:00.000Z",
        app: { id: APP.id, name: "shop", url: "http://shop-a1.localhost:8787" },
        console_url: `http://localhost:8787/console/apps/${APP.id}`,
        details: { deploy_id: "d1", message: "The build failed." },
      },
    ],
    [
      "the wallet's event: no app, the billing page",
      { event: "wallet.low", at: AT, details: { balance_cents: 100, due_cents: 500 } },
      "https://console.example.net",
      { event: "wallet.low", at: "2026-11-27T12:00:00.000Z", app: null, console_url: "https://console.example.net/console/billing", details: { balance_cents: 100, due_cents: 500 } },
    ],
    [
      "a test: no app, the notifications page",
      { event: "test", at: AT, details: {} },
      "https://console.example.net",
      { event: "test", at: "2026-11-27T12:00:00.000Z", app: null, console_url: "https://console.example.net/console/notifications", details: {} },
    ],
  ])("%s", (_case, input, origin, expected) => expect(buildPayload(input, origin, "localhost")).toEqual(expected));
});

describe("chat formats", () => {
  const payload = buildPayload({ event: "app.crashed", at: AT, app: APP, details: { message: "Exit code 1 <boom>." } }, "https://c.example.net", "apps.example.net");

  it("summary: the event's title, the app, the detail's message", () => {
    expect(summary(payload)).toBe("App crashed: shop. Exit code 1 <boom>.");
  });

  it("Slack: {text, blocks} with the console link, mrkdwn escaped", () => {
    expect(slackBody(payload)).toEqual({
      text: "App crashed: shop. Exit code 1 <boom>.",
      blocks: [
        { type: "section", text: { type: "mrkdwn", text: `App crashed: shop. Exit code 1 &lt;boom&gt;.\n<https://c.example.net/console/apps/${APP.id}|Open in the console>` } },
        { type: "context", elements: [{ type: "mrkdwn", text: "`app.crashed` at 2026-11-27T12:00:00.000Z · https://shop-a1.apps.example.net" }] },
      ],
    });
  });

  it("Discord: {content, embeds} with the console link", () => {
    expect(discordBody(payload)).toEqual({
      content: "App crashed: shop. Exit code 1 <boom>.",
      embeds: [
        {
          title: "App crashed",
          description: "shop (https://shop-a1.apps.example.net)",
          url: `https://c.example.net/console/apps/${APP.id}`,
          timestamp: "2026-11-27T12:00:00.000Z",
          footer: { text: "app.crashed" },
        },
      ],
    });
  });

  it.each(["webhook", "slack", "discord"] as const)("%s: JSON, and only the webhook is signed", async (kind) => {
    const request = await outgoingRequest(kind, payload, "whsec_x", 1700000000);
    expect(request.headers["Content-Type"]).toBe("application/json");
    expect("X-Signature-256" in request.headers).toBe(kind === "webhook");
    if (kind === "webhook") {
      expect(JSON.parse(request.body)).toEqual(payload);
      expect(await verifySignature("whsec_x", { timestamp: request.headers["X-Webhook-Timestamp"]!, signature: request.headers["X-Signature-256"]! }, request.body, 1700000000)).toBe(true);
    }
  });
});
