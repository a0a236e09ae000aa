/**
 * A test double of Cloudflare's API v4 custom hostnames (Cloudflare for SaaS), Node side, started
 * by vitest.config.ts. It speaks the documented shapes: `POST/GET/DELETE
 * /zones/<zone>/custom_hostnames[/<id>]` with the envelope `{success, errors, messages, result}`,
 * bearer authentication, `status` and `ssl.status`, error 1406 for a duplicate hostname. A test
 * moves a hostname along as Cloudflare would with `PUT /__control/<hostname>` (`{status, ssl}`)
 * and makes the next call fail with `PUT /__control/fail-next` (`{status, code, message}`).
 */
import { randomUUID } from "node:crypto";
import { type Server, createServer } from "node:http";

export const FAKE_CLOUDFLARE_TOKEN = "test-cloudflare-token";
export const FAKE_CLOUDFLARE_ZONE = "023e105f4ecef8ad9ca31a8372d0c353";

interface Hostname {
  id: string;
  hostname: string;
  status: string;
  ssl: { id: string; method: string; type: string; status: string };
  created_at: string;
}

export async function startFakeCloudflare(): Promise<{ url: string; close(): Promise<void> }> {
  const hostnames = new Map<string, Hostname>();
  let failNext: { status: number; code: number; message: string } | null = null;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const send = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      const ok = (result: unknown, status = 200) => send(status, { success: true, errors: [], messages: [], result });
      const fail = (status: number, code: number, message: string) => send(status, { success: false, errors: [{ code, message }], messages: [], result: null });
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>) : {};
      const path = new URL(req.url ?? "/", "http://api").pathname.replace(/^\/client\/v4/, "");

      const control = /^\/__control\/(.+)$/.exec(path);
      if (control && req.method === "PUT") {
        if (control[1] === "fail-next") {
          failNext = body as typeof failNext;
          return res.writeHead(204).end();
        }
        const found = [...hostnames.values()].find((h) => h.hostname === control[1]);
        if (!found) return fail(404, 1436, "Custom hostname not found.");
        if (typeof body.status === "string") found.status = body.status;
        if (typeof body.ssl === "string") found.ssl.status = body.ssl;
        return ok(found);
      }

      if (req.headers.authorization !== `Bearer ${FAKE_CLOUDFLARE_TOKEN}`) return fail(403, 10000, "Authentication error");
      if (failNext) {
        const f = failNext;
        failNext = null;
        return fail(f.status, f.code, f.message);
      }
      const match = /^\/zones\/([^/]+)\/custom_hostnames(?:\/([^/]+))?$/.exec(path);
      if (!match || match[1] !== FAKE_CLOUDFLARE_ZONE) return fail(404, 7003, "Could not route to the requested path.");
      const id = match[2];
      if (!id && req.method === "POST") {
        const hostname = String(body.hostname ?? "");
        if ([...hostnames.values()].some((h) => h.hostname === hostname)) return fail(409, 1406, "Duplicate custom hostname found.");
        const ssl = (body.ssl ?? {}) as { method?: string; type?: string };
        const created: Hostname = {
          id: randomUUID(),
          hostname,
          status: "pending",
          ssl: { id: randomUUID(), method: ssl.method ?? "http", type: ssl.type ?? "dv", status: "initializing" },
          created_at: new Date().toISOString(),
        };
        hostnames.set(created.id, created);
        return ok(created, 201);
      }
      const found = id ? hostnames.get(id) : undefined;
      if (!found) return fail(404, 1436, "Custom hostname not found.");
      if (req.method === "GET") return ok(found);
      if (req.method === "DELETE") {
        hostnames.delete(found.id);
        return ok({ id: found.id });
      }
      fail(405, 10405, "Method not allowed.");
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  server.unref();
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/client/v4`, close: () => new Promise((ok) => server.close(() => ok())) };
}
