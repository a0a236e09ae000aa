/**
 * The bench's floor: the least a Hono Worker can do under the same `wrangler dev` as the control
 * plane. `/healthz` answers a small JSON body; `/proxy` makes one `fetch` to the upstream named by
 * the `X-Upstream` header (the app's instance, as the control plane's proxy does) and streams the
 * reply back; `GET /object` reads one object from R2 (the local emulation, as the control plane's
 * archives) and streams it back, once the bench has stored the object there with `PUT /object`.
 * Every request to ours is compared with the same request here.
 */
import { Hono } from "hono";

/** What this Worker uses of its R2 binding (the scripts are type-checked without the Workers types). */
interface Bucket {
  put(key: string, value: ArrayBuffer): Promise<unknown>;
  get(key: string): Promise<{ body: ReadableStream; size: number } | null>;
}

const app = new Hono<{ Bindings: { OBJECTS: Bucket } }>();
app.get("/healthz", (c) => c.json({ ok: true }));
app.all("/proxy", async (c) => {
  const upstream = c.req.header("X-Upstream");
  if (!upstream) return c.text("X-Upstream is required", 400);
  const res = await fetch(upstream, { method: c.req.method, headers: c.req.raw.headers, body: c.req.raw.body, redirect: "manual" });
  return new Response(res.body, res);
});
app.put("/object", async (c) => {
  await c.env.OBJECTS.put("object", await c.req.arrayBuffer());
  return c.body(null, 204);
});
app.get("/object", async (c) => {
  const object = await c.env.OBJECTS.get("object");
  if (!object) return c.text("PUT /object first", 404);
  return new Response(object.body, { headers: { "Content-Type": "application/gzip", "Content-Length": String(object.size) } });
});

export default app;
