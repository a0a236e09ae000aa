/**
 * A stand-in for a customer's webhook receiver (docs/alerts.md), Node side: started by
 * vitest.config.ts for the Worker tests and by the alerts e2e test. Each inbox is a path,
 * `POST /hooks/<inbox>`; what it received is read back with `GET /__control/<inbox>`.
 *
 * A test sets an inbox up with `PUT /__control/<inbox>` `{secret?, fail?}`: with a secret, each
 * delivery's `X-Signature-256` is checked as docs/alerts.md tells a receiver to (HMAC-SHA256 of
 * `<timestamp>.<body>`, the timestamp within 5 minutes); `fail: n` answers the next n deliveries
 * 500, to force retries. Every delivery is kept with whether its signature held and what was
 * answered.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { type Server, createServer } from "node:http";

export interface ReceivedDelivery {
  at: number;
  body: string;
  json: unknown;
  timestamp: string | null;
  signature: string | null;
  /** The signature held (null: the inbox has no secret to check with). */
  verified: boolean | null;
  answered: number;
}

interface Inbox {
  secret: string | null;
  fail: number;
  received: ReceivedDelivery[];
}

/** The receiver's check, in Node: what a customer's receiver would run. */
export function verifyWebhook(secret: string, timestamp: string | null, signature: string | null, body: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  if (!timestamp || !signature?.startsWith("sha256=") || Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const expected = Buffer.from(createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex"));
  const given = Buffer.from(signature.slice("sha256=".length));
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export async function startFakeReceiver(options: { host?: string } = {}): Promise<{ url: string; close(): Promise<void> }> {
  const inboxes = new Map<string, Inbox>();
  const inbox = (name: string) => {
    let found = inboxes.get(name);
    if (!found) inboxes.set(name, (found = { secret: null, fail: 0, received: [] }));
    return found;
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const path = new URL(req.url ?? "/", "http://receiver").pathname;
      const json = (status: number, value: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      const control = /^\/__control\/([\w.-]+)$/.exec(path);
      if (control && req.method === "PUT") {
        const settings = JSON.parse(body || "{}") as { secret?: string; fail?: number };
        const box = inbox(control[1]!);
        box.secret = settings.secret ?? box.secret;
        box.fail = settings.fail ?? 0;
        return res.writeHead(204).end();
      }
      if (control && req.method === "GET") return json(200, { received: inbox(control[1]!).received });
      const hook = /^\/hooks\/([\w.-]+)$/.exec(path);
      if (!hook || req.method !== "POST") return json(404, { error: "no such inbox" });
      const box = inbox(hook[1]!);
      const timestamp = (req.headers["x-webhook-timestamp"] as string | undefined) ?? null;
      const signature = (req.headers["x-signature-256"] as string | undefined) ?? null;
      const verified = box.secret === null ? null : verifyWebhook(box.secret, timestamp, signature, body);
      const answered = verified === false ? 401 : box.fail > 0 ? 500 : 200;
      if (answered === 500) box.fail--;
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(body);
      } catch {
        // kept as text
      }
      box.received.push({ at: Date.now(), body, json: parsed, timestamp, signature, verified, answered });
      json(answered, { ok: answered === 200 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, options.host ?? "127.0.0.1", resolve));
  server.unref();
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("receiver did not bind");
  return { url: `http://${options.host ?? "127.0.0.1"}:${address.port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
