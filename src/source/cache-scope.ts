/**
 * The build cache scope of an app: HMAC-SHA256 of the app id under the newest ENV_ENCRYPTION_KEY
 * (with its own label, so it is never a value the key seals or signs elsewhere), as 32 hex digits.
 * The same app gets the same scope at every deploy, so its layers are reused; another app, of any
 * account, gets another, and cannot compute this one without the key. Rotating the key changes
 * every scope once: the next build of each app starts cold.
 */
import type { EncryptionKey } from "../config";
import { fromBase64, utf8 } from "../lib/encoding";

const LABEL = "build-cache-scope-v1";

export async function buildCacheScope(keys: readonly EncryptionKey[], appId: string): Promise<string> {
  const newest = keys[0];
  if (!newest) throw new Error("No ENV_ENCRYPTION_KEY is configured.");
  const key = await crypto.subtle.importKey("raw", fromBase64(newest.key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8(`${LABEL}\0${appId}`)));
  return [...mac.subarray(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
