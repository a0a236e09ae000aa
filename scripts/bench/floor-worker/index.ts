/**
 * The bench's floor: the least a Hono Worker can do under the same `wrangler dev` as the control
 * plane. `/healthz` answers a small JSON body; `/proxy` makes one `fetch` to the upstream named by
 * the `X-Upstream` header (the app's instance, as the control plane's proxy does) and streams the
 * reply back. Every request to ours is compared with the same request here.
 */
import { Hono } from "hono";

const app = new Hono();
app.get("/healthz", (c) => c.json({ ok: true }));
app.all("/proxy", async (c) => {
  const upstream = c.req.header("X-Upstream");
  if (!upstream) return c.text("X-Upstream is required", 400);
  const res = await fetch(upstream, { method: c.req.method, headers: c.req.raw.headers, body: c.req.raw.body, redirect: "manual" });
  return new Response(res.body, res);
});

export default app;
