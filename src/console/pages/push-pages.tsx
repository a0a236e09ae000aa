import { Hono } from "hono";
import { appController } from "../../apps/app-controller";
import type { AppEnv } from "../../http/context";
import { sourceTokenProblem } from "../../source/token";
import { rotateWebhookSecret } from "../../webhooks/secret";
import { appPath, ownedApp, renderSettings } from "./app-tab-pages";
import { setFlash } from "./flash";

/** Where these forms lead back to: their section of the Settings tab. */
const pushPath = (id: string) => `${appPath(id)}/settings#push`;

/**
 * The page forms of the "Private repository and deploy on push" section: save or remove the
 * access token (through the app's controller, like every setting), and make a new webhook
 * secret, answered with the page itself so the secret is shown once and never stored in a flash.
 */
export const pushPages = new Hono<AppEnv>()
  .post("/:id/source-token", async (c) => {
    const row = await ownedApp(c);
    const form = await c.req.parseBody();
    const token = typeof form.source_token === "string" ? form.source_token.trim() : "";
    const problem = sourceTokenProblem(token);
    if (problem) return renderSettings(c, row, { push: { tokenError: problem } }, 400);
    const saved = await appController(c.env, row.id).changeSettings({ appId: row.id, settings: { source_token: token }, now: c.get("deps").now() });
    await setFlash(c, "outcome" in saved || !saved.ok ? { error: saved.message } : { notice: "Access token saved. The next deploy uses it; it is not shown again." });
    return c.redirect(pushPath(row.id), 303);
  })
  .post("/:id/source-token/remove", async (c) => {
    const row = await ownedApp(c);
    const saved = await appController(c.env, row.id).changeSettings({ appId: row.id, settings: { source_token: null }, now: c.get("deps").now() });
    await setFlash(c, "outcome" in saved || !saved.ok ? { error: saved.message } : { notice: "Access token removed. The next deploy fetches the repository as a public one." });
    return c.redirect(pushPath(row.id), 303);
  })
  .post("/:id/webhook/rotate", async (c) => {
    const row = await ownedApp(c);
    const { secret } = await rotateWebhookSecret(c.env, row, c.req.url);
    return renderSettings(c, await ownedApp(c), { push: { secret } });
  });
