import { env, exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PageClient, fieldError, inputValue, signedUpPage } from "./console-pages-helpers";
import { ORIGIN } from "./helpers";

// The Notifications page (docs/alerts.md), as a browser without script uses it: reachable from
// the console's navigation; add a channel (kind, address, events), the webhook's secret shown once;
// a refused field named under it; send a test and see its delivery; delete.

/** Posts a form whose `events` field repeats, as a browser sends checked boxes. */
async function postChannel(client: PageClient, fields: [string, string][]): Promise<Response> {
  const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const res = await workerExports.default.fetch(
    new Request(`${ORIGIN}/console/notifications/channels`, {
      method: "POST",
      headers: { Origin: ORIGIN, Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual",
    }),
  );
  for (const line of res.headers.getSetCookie()) {
    const [pair = ""] = line.split(";");
    const eq = pair.indexOf("=");
    client.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return res;
}

async function until(what: () => Promise<string>, done: (html: string) => boolean, timeoutMs = 20_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const html = await what();
    if (done(html) || Date.now() > end) return html;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("console pages: notifications", { timeout: 60_000 }, () => {
  it("sends a signed-out visitor to sign in; the navigation links the page", async () => {
    const res = await new PageClient().get("/console/notifications");
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe(`/console/signin?next=${encodeURIComponent("/console/notifications")}`);
    const client = await signedUpPage();
    expect(await client.page("/console/billing")).toContain('<a href="/console/notifications">Notifications</a>');
    const html = await client.page("/console/notifications");
    expect(html).toContain('<a href="/console/notifications" aria-current="page">Notifications</a>');
    expect(html).toContain("No channels yet");
    expect(html).toContain("Nothing sent yet");
  });

  it("refuses a bad address or no event, naming the field, and keeps what was typed", async () => {
    const client = await signedUpPage();
    const local = await postChannel(client, [["kind", "webhook"], ["url", "http://169.254.169.254/x"], ["events", "deploy.failed"]]);
    expect(local.status).toBe(400);
    const html = await local.text();
    expect(fieldError(html, "url")).toBe("Notifications are never sent to link-local, metadata or reserved addresses.");
    expect(inputValue(html, "f-url")).toBe("http://169.254.169.254/x");
    const none = await postChannel(client, [["kind", "slack"], ["url", "https://hooks.example.com/x"]]);
    expect(none.status).toBe(400);
    expect(await none.text()).toContain('<p class="field-error" id="f-events-error">');
  });

  it("adds a webhook showing its secret once, sends a test that is delivered signed, and deletes it", async () => {
    const client = await signedUpPage();
    const inbox = `page-${Date.now()}`;
    const added = await postChannel(client, [["kind", "webhook"], ["url", `${env.RECEIVER_URL}/hooks/${inbox}`], ["events", "deploy.failed"], ["events", "app.crashed"]]);
    expect(added.status).toBe(303);
    const first = await client.page("/console/notifications");
    const secret = inputValue(first, "new-secret-value")!;
    expect(secret).toMatch(/^whsec_[0-9a-f]{64}$/);
    expect(first).toContain("deploy.failed, app.crashed");
    expect(await client.page("/console/notifications")).not.toContain(secret);
    await fetch(`${env.RECEIVER_URL}/__control/${inbox}`, { method: "PUT", body: JSON.stringify({ secret }) });
    const id = /data-channel-id="([0-9a-f-]{36})"/.exec(first)![1]!;
    expect((await client.post(`/console/notifications/channels/${id}/test`, {})).status).toBe(303);
    const delivered = await until(() => client.page("/console/notifications"), (html) => html.includes('data-status="delivered"'));
    expect(delivered).toContain('data-status="delivered"');
    const got = (await (await fetch(`${env.RECEIVER_URL}/__control/${inbox}`)).json()) as { received: { verified: boolean }[] };
    expect(got.received.map((r) => r.verified)).toEqual([true]);
    expect((await client.post(`/console/notifications/channels/${id}/delete`, {})).status).toBe(303);
    const after = await client.page("/console/notifications");
    expect(after).toContain("The webhook channel was deleted.");
    expect(after).toContain("No channels yet");
    // Another account's channel: the forms answer 404.
    const stranger = await signedUpPage();
    const again = await postChannel(client, [["kind", "discord"], ["url", "https://discord.example.com/api/webhooks/1/x"], ["events", "deploy.live"]]);
    expect(again.status).toBe(303);
    const other = /data-channel-id="([0-9a-f-]{36})"/.exec(await client.page("/console/notifications"))![1]!;
    expect((await stranger.post(`/console/notifications/channels/${other}/delete`, {})).status).toBe(404);
  });
});
