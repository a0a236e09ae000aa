/**
 * The `Idempotency-Key` request header of the operator's credit route (as in the IETF draft
 * "The Idempotency-Key HTTP Header Field"): absent means no idempotency; otherwise the key is
 * 1 to 255 visible ASCII characters, optionally sent as a quoted string (`"8e03...f324"`, the
 * draft's Structured Field form), which is the same key as the bare value.
 */

export const IDEMPOTENCY_KEY_MAX = 255;

export type KeyReading = { ok: true; key: string | null } | { ok: false; message: string };

export function readIdempotencyKey(header: string | undefined | null): KeyReading {
  if (header === undefined || header === null) return { ok: true, key: null };
  let key = header.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX || !/^[\x21-\x7e]+$/.test(key) || key.includes('"')) {
    return { ok: false, message: `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} visible ASCII characters with no spaces or quotes (a UUID, say).` };
  }
  return { ok: true, key };
}
