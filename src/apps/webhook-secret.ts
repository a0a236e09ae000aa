import { newWebhookSecret, sealWebhookSecret } from "../webhooks/secret";
import { saveWebhookSecret } from "./app-columns";
import type { AppRow } from "./store";
import { webhookUrl } from "./views";

/** Makes a new webhook secret (the old one stops verifying at once) and answers the address and the secret (src/webhooks/secret.ts). */
export async function rotateWebhookSecret(env: Env, app: AppRow, requestUrl: string): Promise<{ url: string; secret: string }> {
  const secret = newWebhookSecret();
  await saveWebhookSecret(env, app.id, await sealWebhookSecret(env, app.id, secret));
  return { url: webhookUrl(app.id, requestUrl), secret };
}
