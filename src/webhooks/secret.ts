import { getConfig } from "../config";
import type { SealedSecret } from "../db/schema";
import { openValue, sealValue } from "../lib/sealing";
import { randomBytes, toHex } from "../lib/encoding";

/**
 * The app's webhook secret. GitHub and Gitea sign deliveries with an HMAC under the secret itself
 * and GitLab sends it as is, so a hash would not do: it is sealed like an environment value
 * (AES-GCM, bound to the app and to this purpose) and opened only to check a delivery. It is
 * shown once, in the reply of the rotation that made it.
 */

const PLACE = "@webhook_secret";

/** 32 random bytes as hex: a secret every forge's form accepts. */
export function newWebhookSecret(): string {
  return toHex(randomBytes(32));
}

export async function openWebhookSecret(env: Env, appId: string, sealed: SealedSecret): Promise<string> {
  return openValue(getConfig(env).ENV_ENCRYPTION_KEY, { appId, key: PLACE }, sealed);
}

/** The secret sealed for the app's record (src/apps/webhook-secret.ts rotateWebhookSecret writes it). */
export async function sealWebhookSecret(env: Env, appId: string, secret: string): Promise<SealedSecret> {
  return sealValue(getConfig(env).ENV_ENCRYPTION_KEY, { appId, key: PLACE }, secret);
}
