import { createRoute, z } from "@hono/zod-openapi";
import { ownedApp } from "../actions/apps";
import { callerOf } from "../actions/caller";
import { newWebhookSecret } from "../actions/webhook";
import { AppIdParams } from "./app-schemas";
import { NO_STORE, SIGNED_IN_REPLIES, consoleRouter, errorReply, jsonReply } from "./openapi";

const rotateRoute = createRoute({
  method: "post",
  path: "/{id}/webhook/rotate",
  operationId: "rotateWebhookSecret",
  tags: ["Deploy on push"],
  summary: "Make a new webhook secret",
  description: "The secret is shown this once (the app JSON shows only `webhook: {url, secret_set}`); the previous one stops verifying at once.",
  request: { params: AppIdParams },
  responses: {
    200: jsonReply(z.object({ url: z.string(), secret: z.string() }), "The webhook's address and its new secret.", NO_STORE),
    404: errorReply("No app with this id in your account.", ["NOT_FOUND"]),
    ...SIGNED_IN_REPLIES,
  },
});

/** `POST /console/api/apps/{id}/webhook/rotate` -> `{url, secret}`: a new webhook secret for deploy on push (src/console/actions/webhook.ts). */
export const webhookSecretRoutes = consoleRouter().openapi(rotateRoute, async (c) => {
  const caller = callerOf(c);
  return c.json(await newWebhookSecret(caller, await ownedApp(caller, c.req.valid("param").id)), 200, { "Cache-Control": "no-store" });
});
