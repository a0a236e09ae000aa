import { timingSafeEqual } from "../auth/password";
import { randomBytes, toHex, utf8 } from "../lib/encoding";

/**
 * The webhook channel's signature (docs/alerts.md, "Verifying a webhook"): the message is
 * `<timestamp>.<body>`, its HMAC-SHA256 under the channel's secret in lowercase hex, sent as
 * `X-Signature-256: sha256=<hex>` beside `X-Webhook-Timestamp: <unix seconds>`. Signing the
 * timestamp with the body lets a receiver refuse a replayed delivery by its age.
 */

export const TIMESTAMP_HEADER = "X-Webhook-Timestamp";
export const SIGNATURE_HEADER = "X-Signature-256";

/** A new channel secret: 32 random bytes as hex, prefixed so it is recognisable in a vault. */
export function newChannelSecret(): string {
  return `whsec_${toHex(randomBytes(32))}`;
}

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", utf8(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toHex(await crypto.subtle.sign("HMAC", key, utf8(message)));
}

/** The two headers for `body` sent at `timestampSeconds`. */
export async function signatureHeaders(secret: string, timestampSeconds: number, body: string): Promise<Record<string, string>> {
  const signature = await hmacHex(secret, `${timestampSeconds}.${body}`);
  return { [TIMESTAMP_HEADER]: String(timestampSeconds), [SIGNATURE_HEADER]: `sha256=${signature}` };
}

/** A receiver's check (what docs/alerts.md shows): the signature matches and the timestamp is within `toleranceSeconds` of `nowSeconds`. */
export async function verifySignature(secret: string, headers: { timestamp: string | null; signature: string | null }, body: string, nowSeconds: number, toleranceSeconds = 300): Promise<boolean> {
  if (!headers.timestamp || !/^\d{1,12}$/.test(headers.timestamp) || !headers.signature?.startsWith("sha256=")) return false;
  if (Math.abs(nowSeconds - Number(headers.timestamp)) > toleranceSeconds) return false;
  const expected = await hmacHex(secret, `${headers.timestamp}.${body}`);
  return timingSafeEqual(utf8(expected), utf8(headers.signature.slice("sha256=".length)));
}
