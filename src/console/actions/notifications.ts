import type { Context } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../../http/context";
import { ApiError } from "../../http/errors";
import { ChannelRequest, addChannel as makeChannel, sendTest, viewChannel, viewDelivery } from "../../notifications/service";
import { deleteChannel as removeChannel, getOwnedChannel, listChannels as channelsOf, listDeliveries as deliveriesOf } from "../../notifications/store";
import type { Outcome } from "./outcome";

/**
 * Alerts (docs/alerts.md): the account's channels (a webhook's secret is in the answer that made
 * it, only), a test send, and the last deliveries. The JSON routes (api/notifications.ts) and the
 * Notifications page (notifications-page.tsx) call these. Another account's channel answers 404
 * like a missing one.
 */

export { ChannelId, ChannelRequest, DeliveriesQuery } from "../../notifications/service";

export type ChannelView = ReturnType<typeof viewChannel>;
export type DeliveryView = ReturnType<typeof viewDelivery>;
export type NewChannel = Awaited<ReturnType<typeof makeChannel>>;

export async function listChannels(c: Context<AppEnv>): Promise<ChannelView[]> {
  return (await channelsOf(c.env, c.get("accountId")!)).map(viewChannel);
}

export async function listDeliveries(c: Context<AppEnv>, limit: number): Promise<DeliveryView[]> {
  return (await deliveriesOf(c.env, c.get("accountId")!, limit)).map(viewDelivery);
}

/**
 * Adds a channel. A refused address (field `url`) or one channel too many (field `events`, where
 * the page shows it) is a refusal; the console's own origin goes into every payload's links.
 */
export async function addChannel(c: Context<AppEnv>, input: z.output<typeof ChannelRequest>): Promise<Outcome<{ channel: NewChannel }>> {
  try {
    return { ok: true, channel: await makeChannel(c.env, { ...input, accountId: c.get("accountId")!, consoleOrigin: new URL(c.req.url).origin, now: c.get("deps").now() }) };
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    const onUrl = err.message.startsWith("url: ");
    const extra = err.options.extra;
    return { ok: false, code: err.code, message: onUrl ? err.message.slice("url: ".length) : err.message, field: onUrl ? "url" : "events", ...(extra ? { extra } : {}) };
  }
}

/** Deletes one of the account's channels; the deleted one. */
export async function deleteChannel(c: Context<AppEnv>, id: string): Promise<ChannelView> {
  const channel = await getOwnedChannel(c.env, c.get("accountId")!, id);
  await removeChannel(c.env, channel.accountId, channel.id);
  return viewChannel(channel);
}

/** Queues a test notification to one of the account's channels; its delivery's id. */
export async function testChannel(c: Context<AppEnv>, id: string): Promise<string> {
  const channel = await getOwnedChannel(c.env, c.get("accountId")!, id);
  return sendTest(c.env, channel, c.get("deps").now());
}
