import { Hono } from "hono";
import { getOwnedApp } from "../../apps/store";
import type { AppEnv } from "../../http/context";
import { rotateWebhookSecret } from "../../webhooks/secret";

/**
 * `POST /console/api/apps/{id}/webhook/rotate` -> `{url, secret}`: a new webhook secret for deploy
 * on push, shown this once (the app JSON shows only `webhook: {url, secret_set}`); the previous
 * secret stops verifying at once.
 */
export const webhookSecretRoutes = new Hono<AppEnv>().post("/:id/webhook/rotate", async (c) => {
  const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id"));
  return c.json(await rotateWebhookSecret(c.env, app, c.req.url), 200, { "Cache-Control": "no-store" });
});
