import { Secret, TOTP } from "otpauth";
import { randomBytes } from "../lib/encoding";

/**
 * Two-step sign-in codes: TOTP (RFC 6238) as authenticator apps compute them, SHA-1, 6 digits,
 * 30-second steps, through the otpauth library; and the one-time recovery codes. Pure apart from
 * the random draws: the time is an argument.
 */

export const TOTP_ISSUER = "Control Plane";
const PERIOD_SECONDS = 30;
/** A code of the step before or after now is accepted too (clocks drift, people type slowly). */
const WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;

function totp(secret: string, label = ""): TOTP {
  return new TOTP({ issuer: TOTP_ISSUER, label, algorithm: "SHA1", digits: 6, period: PERIOD_SECONDS, secret: Secret.fromBase32(secret) });
}

/** A fresh secret: 20 random bytes (160 bits, RFC 4226's recommendation), in base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://totp/...` URI an authenticator app reads from the QR code. */
export function otpauthUrl(secret: string, email: string): string {
  return totp(secret, email).toString();
}

/** The 30-second step `now` (Unix ms) falls in. */
export function totpStep(now: number): number {
  return Math.floor(now / 1000 / PERIOD_SECONDS);
}

/** The code for `secret` at `now` (for tests and the enable check's own use). */
export function totpCode(secret: string, now: number): string {
  return totp(secret).generate({ timestamp: now });
}

/** Whether `code` looks like a TOTP code (six digits, spaces allowed) rather than a recovery code. */
export function isTotpShape(code: string): boolean {
  return /^\d{6}$/.test(code.replace(/\s/g, ""));
}

/** The step whose code `code` is, within one step of `now`; null when it is none of them. */
export function matchTotp(secret: string, code: string, now: number): number | null {
  const token = code.replace(/\s/g, "");
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totp(secret).validate({ token, timestamp: now, window: WINDOW });
  return delta === null ? null : totpStep(now) + delta;
}

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/**
 * Ten recovery codes, each 16 base32 characters in four groups (`k3pa-7xqm-d2ve-hw4n`): 80
 * random bits, so a plain SHA-256 of one is safe to store (nobody can try 2^80 of them).
 */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = [...randomBytes(16)].map((b) => BASE32[b & 31]).join("");
    return chars.match(/.{4}/g)!.join("-");
  });
}

/** A recovery code as typed, in its stored spelling (lower case, grouped by hyphens); null when it cannot be one. */
export function normalRecoveryCode(code: string): string | null {
  const chars = code.toLowerCase().replace(/[\s-]/g, "");
  return /^[a-z2-7]{16}$/.test(chars) ? chars.match(/.{4}/g)!.join("-") : null;
}
