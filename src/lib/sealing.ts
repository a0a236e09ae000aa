import { fromBase64, randomBytes, toBase64, utf8 } from "./encoding";

/**
 * Environment values at rest (docs/envvars.md, rule 5: "Values are encrypted at rest"): AES-GCM under the
 * newest ENV_ENCRYPTION_KEY, with the app id and the key name as associated data, so a ciphertext
 * moved to another app or another key no longer decrypts. Older keys still decrypt (rotation).
 */

/** One ENV_ENCRYPTION_KEY entry (src/config.ts): its id and 32 random bytes in base64. */
export interface EncryptionKey {
  kid: string;
  key: string;
}

export interface SealedValue {
  kid: string;
  /** base64 */
  iv: string;
  /** base64, tag included */
  ciphertext: string;
}

const IV_BYTES = 12;
const imported = new Map<string, Promise<CryptoKey>>();

function aesKey(key: EncryptionKey): Promise<CryptoKey> {
  let cryptoKey = imported.get(key.key);
  if (!cryptoKey) {
    cryptoKey = crypto.subtle.importKey("raw", fromBase64(key.key), "AES-GCM", false, ["encrypt", "decrypt"]);
    imported.set(key.key, cryptoKey);
  }
  return cryptoKey;
}

/** What binds a ciphertext to its place: the app and the variable's key. */
function associatedData(appId: string, key: string): Uint8Array<ArrayBuffer> {
  return utf8(`env-v1\0${appId}\0${key}`);
}

/** Seals one value with the newest key. */
export async function sealValue(keys: readonly EncryptionKey[], place: { appId: string; key: string }, value: string): Promise<SealedValue> {
  const newest = keys[0];
  if (!newest) throw new Error("No ENV_ENCRYPTION_KEY is configured.");
  const iv = randomBytes(IV_BYTES);
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: associatedData(place.appId, place.key) }, await aesKey(newest), utf8(value));
  return { kid: newest.kid, iv: toBase64(iv), ciphertext: toBase64(sealed) };
}

/** Opens one value; throws when its key is not configured or it was sealed for another app or key. */
export async function openValue(keys: readonly EncryptionKey[], place: { appId: string; key: string }, sealed: SealedValue): Promise<string> {
  const key = keys.find((k) => k.kid === sealed.kid);
  if (!key) throw new Error(`environment value sealed with unknown kid ${sealed.kid}`);
  const clear = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(sealed.iv), additionalData: associatedData(place.appId, place.key) },
    await aesKey(key),
    fromBase64(sealed.ciphertext),
  );
  return new TextDecoder().decode(clear);
}
