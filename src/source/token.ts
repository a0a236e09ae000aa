import type { EncryptionKey } from "../config";
import type { SealedSecret } from "../db/schema";
import { openValue, sealValue } from "../lib/sealing";

/**
 * A private repository's forge access token: sealed like an environment value (AES-GCM under
 * ENV_ENCRYPTION_KEY, bound to the app and to this purpose, so it opens nowhere else), opened
 * only by the deploy job, and sent only to the forge's own host in the header that forge reads.
 */

/** The associated-data name: not a valid variable name, so no variable's ciphertext can pass for it. */
const PLACE = "@source_token";

/** The red panel when the saved token does not open (its ENV_ENCRYPTION_KEY entry was removed, or it was sealed for another app). */
export const SOURCE_TOKEN_UNREADABLE = "The saved access token can no longer be read (its encryption key is gone). Save the token again in the app's settings, then deploy.";

export function sealSourceToken(keys: readonly EncryptionKey[], appId: string, token: string): Promise<SealedSecret> {
  return sealValue(keys, { appId, key: PLACE }, token);
}

export function openSourceToken(keys: readonly EncryptionKey[], appId: string, sealed: SealedSecret): Promise<string> {
  return openValue(keys, { appId, key: PLACE }, sealed);
}

/** The message for a token as typed, or null when usable: printable ASCII with no spaces, as headers carry it. */
export function sourceTokenProblem(token: string): string | null {
  if (token === "") return "Enter the access token, or send null to remove it.";
  if (token.length > 1000) return "The access token is longer than 1000 characters.";
  if (!/^[\x21-\x7e]+$/.test(token)) return "An access token is printable characters with no spaces.";
  return null;
}

export { tokenHeader } from "./token-header";
