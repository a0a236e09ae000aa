import { Hono } from "hono";
import type { AppEnv } from "../../http/context";
import { sourceTokenProblem } from "../../source/token";
import { callerOf } from "../actions/caller";
import { newWebhookSecret } from "../actions/webhook";
import { appPath, ownedApp, renderSettings, saveSettingsForm } from "./app-tab-pages";

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
    const notice = "Access token saved. The next deploy uses it; it is not shown again.";
    return saveSettingsForm(c, row, { source_token: token }, { values: {}, notice, back: pushPath(row.id) });
  })
  .post("/:id/source-token/remove", async (c) => {
    const row = await ownedApp(c);
    const notice = "Access token removed. The next deploy fetches the repository as a public one.";
    return saveSettingsForm(c, row, { source_token: null }, { values: {}, notice, back: pushPath(row.id) });
  })
  .post("/:id/webhook/rotate", async (c) => {
    const row = await ownedApp(c);
    const { secret } = await newWebhookSecret(callerOf(c), row);
    return renderSettings(c, await ownedApp(c), { push: { secret } });
  });
