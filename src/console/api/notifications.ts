import { createRoute, z } from "@hono/zod-openapi";
import { ChannelId, ChannelRequest, DeliveriesQuery, addChannel, deleteChannel, listChannels, listDeliveries, testChannel } from "../actions/notifications";
import { orThrow } from "../actions/outcome";
import { ChannelView, DeliveryView, Success } from "./account-schemas";
import { NO_STORE, SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonBody, jsonBodyFirst, jsonReply } from "./openapi";

/**
 * The console's JSON routes for alerts (docs/alerts.md), under `/console/api/notifications` and
 * the session guard: channels (a webhook's secret is in the 201 only), a test send, and the last
 * deliveries. A bad body or parameter answers 400 INVALID_REQUEST naming the field.
 */

const tags = ["Notifications"];
const channelParam = z.object({ id: ChannelId.openapi({ param: { name: "id", in: "path" }, format: "uuid", description: "The channel's id." }) });
const BAD_ID = errorReply("`id` is not a channel id.", ["INVALID_REQUEST"]);
const NO_CHANNEL = errorReply("No such channel in the account; another account's answers the same.", ["NOT_FOUND"]);

const listRoute = createRoute({
  method: "get",
  path: "/channels",
  operationId: "listChannels",
  tags,
  summary: "List the notification channels",
  responses: { 200: jsonReply(z.object({ channels: z.array(ChannelView) }), "The channels, oldest first."), ...SIGNED_IN_REPLIES },
});

const addRoute = createRoute({
  method: "post",
  path: "/channels",
  operationId: "addChannel",
  tags,
  summary: "Add a notification channel",
  description: "A signed webhook, a Slack or a Discord incoming webhook, and the events it hears. A webhook's signing secret is in this reply only.",
  middleware: [jsonBodyFirst] as const,
  request: { body: jsonBody(ChannelRequest, "The kind, the https:// address, and the events.") },
  responses: {
    201: jsonReply(ChannelView.extend({ secret: z.string().optional().openapi({ description: "A webhook's signing secret, shown once." }) }), "Added.", NO_STORE),
    400: errorReply("A field is missing or not valid, or the address is refused (`url: ...`, with `field: \"url\"`).", ["INVALID_REQUEST"]),
    409: errorReply("The account has its 20 channels already.", ["CONFLICT"]),
    ...SIGNED_IN_REPLIES,
  },
});

const deleteRoute = createRoute({
  method: "delete",
  path: "/channels/{id}",
  operationId: "deleteChannel",
  tags,
  summary: "Delete a notification channel",
  request: { params: channelParam },
  responses: { 200: jsonReply(Success, "Deleted."), 400: BAD_ID, 404: NO_CHANNEL, ...SIGNED_IN_REPLIES },
});

const testRoute = createRoute({
  method: "post",
  path: "/channels/{id}/test",
  operationId: "testChannel",
  tags,
  summary: "Send a test notification",
  description: "Queued at once; its delivery appears in the deliveries.",
  request: { params: channelParam },
  responses: { 202: jsonReply(z.object({ delivery_id: z.string() }), "Queued."), 400: BAD_ID, 404: NO_CHANNEL, ...SIGNED_IN_REPLIES },
});

const deliveriesRoute = createRoute({
  method: "get",
  path: "/deliveries",
  operationId: "listDeliveries",
  tags,
  summary: "List the last deliveries",
  request: { query: DeliveriesQuery.extend({ limit: DeliveriesQuery.shape.limit.openapi({ description: "How many, 1 to 100; 20 unless given." }) }) },
  responses: {
    200: jsonReply(z.object({ deliveries: z.array(DeliveryView) }), "The deliveries, newest first.", NO_STORE),
    400: errorReply("`limit` is not a whole number from 1 to 100.", ["INVALID_REQUEST"]),
    ...SIGNED_IN_REPLIES,
  },
});

export const notificationRoutes = consoleRouter()
  .openapi(listRoute, async (c) => c.json({ channels: await listChannels(c) }, 200))
  .openapi(addRoute, async (c) => c.json(orThrow(await addChannel(c, c.req.valid("json"))).channel, 201, { "Cache-Control": "no-store" }))
  .openapi(deleteRoute, async (c) => {
    await deleteChannel(c, c.req.valid("param").id);
    return c.json({ success: true as const }, 200);
  })
  .openapi(testRoute, async (c) => c.json({ delivery_id: await testChannel(c, c.req.valid("param").id) }, 202))
  .openapi(deliveriesRoute, async (c) => c.json({ deliveries: await listDeliveries(c, c.req.valid("query").limit) }, 200, { "Cache-Control": "no-store" }));
