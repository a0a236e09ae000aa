/**
 * The build cache scope of an app: HMAC-SHA256 of the app id under a key derived (HKDF-SHA256, its
 * own label) from the newest ENV_ENCRYPTION_KEY, as 32 hex digits; the encryption key itself is
 * never used for anything but sealing. The same app gets the same scope at every deploy, so its
 * layers are reused; another app, of any account, gets another, and cannot compute this one
 * without the key. Rotating the key changes every scope once: the next build of each app starts cold.
 */
import type { EncryptionKey } from "../config";
import { fromBase64, utf8 } from "../lib/encoding";

const LABEL = "build-cache-scope-v1";
const derived = new Map<string, Promise<CryptoKey>>();

function scopeKey(key: EncryptionKey): Promise<CryptoKey> {
  let found = derived.get(key.key);
  if (!found) {
    found = crypto.subtle
      .importKey("raw", fromBase64(key.key), "HKDF", false, ["deriveKey"])
      .then((base) => crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(32), info: utf8(LABEL) }, base, { name: "HMAC", hash: "SHA-256", length: 256 }, false, ["sign"]));
    derived.set(key.key, found);
  }
  return found;
}

export async function buildCacheScope(keys: readonly EncryptionKey[], appId: string): Promise<string> {
  const newest = keys[0];
  if (!newest) throw new Error("No ENV_ENCRYPTION_KEY is configured.");
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await scopeKey(newest), utf8(appId)));
  return [...mac.subarray(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
