import { type Context, Hono } from "hono";
import type { AppEnv } from "../../http/context";
import { invalid } from "../../http/errors";
import { describeIssues, readJson } from "../../http/validate";
import { ChannelId, ChannelRequest, DeliveriesQuery, addChannel, sendTest, viewChannel, viewDelivery } from "../../notifications/service";
import { deleteChannel, getOwnedChannel, listChannels, listDeliveries } from "../../notifications/store";

/** The path's channel id, checked; another account's channel answers 404 like a missing one. */
async function ownedChannel(c: Context<AppEnv>) {
  const parsed = ChannelId.safeParse(c.req.param("id"));
  if (!parsed.success) throw invalid(`id: ${parsed.error.issues[0]?.message ?? "Not a channel id."}`);
  return getOwnedChannel(c.env, c.get("accountId")!, parsed.data);
}

/**
 * The console's JSON routes for alerts (docs/alerts.md), under `/console/api/notifications` and
 * the session guard: channels (a webhook's secret is in the 201 only), a test send, and the last
 * deliveries. A bad body or parameter answers 400 INVALID_REQUEST naming the field.
 */
export const notificationRoutes = new Hono<AppEnv>()
  .get("/channels", async (c) => c.json({ channels: (await listChannels(c.env, c.get("accountId")!)).map(viewChannel) }))
  .post("/channels", async (c) => {
    const input = await readJson(c, ChannelRequest);
    const reply = await addChannel(c.env, { ...input, accountId: c.get("accountId")!, consoleOrigin: new URL(c.req.url).origin, now: c.get("deps").now() });
    return c.json(reply, 201, { "Cache-Control": "no-store" });
  })
  .delete("/channels/:id", async (c) => {
    const channel = await ownedChannel(c);
    await deleteChannel(c.env, channel.accountId, channel.id);
    return c.json({ success: true });
  })
  .post("/channels/:id/test", async (c) => {
    const channel = await ownedChannel(c);
    return c.json({ delivery_id: await sendTest(c.env, channel, c.get("deps").now()) }, 202);
  })
  .get("/deliveries", async (c) => {
    const parsed = DeliveriesQuery.safeParse({ limit: c.req.query("limit") });
    if (!parsed.success) throw invalid(describeIssues(parsed.error));
    return c.json({ deliveries: (await listDeliveries(c.env, c.get("accountId")!, parsed.data.limit)).map(viewDelivery) }, 200, { "Cache-Control": "no-store" });
  });
