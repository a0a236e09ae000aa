import type { AppRow } from "../../apps/store";
import { rotateWebhookSecret } from "../../apps/webhook-secret";
import type { Caller } from "./caller";

/**
 * Deploy on push (docs/apps.md): a new webhook secret, for the JSON route (api/webhook.ts) and the
 * Settings tab's form (pages/push-pages.tsx). It is shown this once; the previous secret stops
 * verifying at once.
 */
export function newWebhookSecret(caller: Caller, app: AppRow): Promise<{ url: string; secret: string }> {
  return rotateWebhookSecret(caller.env, app, caller.url);
}
