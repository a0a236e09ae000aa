/** A secret sealed with AES-GCM under ENV_ENCRYPTION_KEY, bound to its app and purpose (src/lib/sealing.ts). */
export interface SealedSecret {
  kid: string;
  iv: string;
  ciphertext: string;
}
