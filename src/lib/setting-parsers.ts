import { z } from "zod";

/**
 * Parsers of the Worker's settings (src/config.ts): each reads one plain environment variable and
 * names the variable in its message when the value is bad.
 */

/** A whole number of at least `min`; empty is `fallback`. */
export const seconds = (name: string, fallback: number, min = 1) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || raw.trim() === "") return fallback;
      const text = raw.trim();
      if (!/^\d+$/.test(text)) {
        ctx.addIssue({ code: "custom", message: `${name} must be a whole number, got "${raw}"` });
        return z.NEVER;
      }
      const value = Number(text);
      if (!Number.isSafeInteger(value) || value < min) {
        ctx.addIssue({ code: "custom", message: `${name} must be at least ${min}, got "${raw}"` });
        return z.NEVER;
      }
      return value;
    });

/** An on/off switch: true, false, 1, 0, on, off, yes, no (any case); empty is `fallback`. */
export const flag = (name: string, fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = raw?.trim().toLowerCase() ?? "";
      if (text === "") return fallback;
      if (["true", "1", "on", "yes"].includes(text)) return true;
      if (["false", "0", "off", "no"].includes(text)) return false;
      ctx.addIssue({ code: "custom", message: `${name} must be true or false, got "${raw}"` });
      return z.NEVER;
    });

/** A positive decimal such as 0.5 or 2 (CPUs). */
export const decimal = (name: string, fallback: number) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = raw?.trim() ?? "";
      if (text === "") return fallback;
      const value = Number(text);
      if (!/^\d+(\.\d+)?$/.test(text) || !(value > 0) || value > 1024) {
        ctx.addIssue({ code: "custom", message: `${name} must be a number above 0 such as 0.5 or 2, got "${raw}"` });
        return z.NEVER;
      }
      return value;
    });

/** A signing key: `<kid>:<secret>`; the kid is short and URL-safe, the secret at least 32 characters. */
const SIGNING_KEY = /^([A-Za-z0-9_-]{1,16}):(.{32,})$/;
/** An encryption key: 32 bytes in base64, alone or as `<kid>:<key>` in a list. */
const BARE_ENCRYPTION_KEY = /^[A-Za-z0-9+/]{43}=$/;
const ENCRYPTION_KEY = /^([A-Za-z0-9_-]{1,16}):([A-Za-z0-9+/]{43}=)$/;
/** The kid of an ENV_ENCRYPTION_KEY given as one bare key; name it so when adding a newer one. */
export const DEFAULT_ENCRYPTION_KID = "default";

/** LINK_SIGNING_KEYS: a comma-separated list of `<kid>:<secret>`, newest first. */
export const signingKeys = () =>
  z
    .string({ message: "LINK_SIGNING_KEYS is not set (run `wrangler secret put LINK_SIGNING_KEYS`)" })
    .transform((raw, ctx) => {
      const keys = raw
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean)
        .map((part) => SIGNING_KEY.exec(part));
      if (keys.length === 0 || keys.some((m) => m === null)) {
        ctx.addIssue({
          code: "custom",
          message:
            "LINK_SIGNING_KEYS must be a comma-separated list of <kid>:<secret> (kid: up to 16 of A-Z a-z 0-9 _ -, secret: 32+ characters), newest first",
        });
        return z.NEVER;
      }
      const parsed = keys.map((m) => ({ kid: m![1]!, secret: m![2]! }));
      if (new Set(parsed.map((k) => k.kid)).size !== parsed.length) {
        ctx.addIssue({ code: "custom", message: "LINK_SIGNING_KEYS has two keys with the same kid" });
        return z.NEVER;
      }
      return parsed;
    });

/** ENV_ENCRYPTION_KEY: a list of `<kid>:<key>` newest first, or one bare key (its kid is `default`). */
export const encryptionKeys = () =>
  z
    .string({ message: "ENV_ENCRYPTION_KEY is not set (run `wrangler secret put ENV_ENCRYPTION_KEY`)" })
    .transform((raw, ctx) => {
      const parts = raw.split(",").map((part) => part.trim()).filter(Boolean);
      const keys = BARE_ENCRYPTION_KEY.test(raw.trim())
        ? [{ kid: DEFAULT_ENCRYPTION_KID, key: raw.trim() }]
        : parts.map((part) => ENCRYPTION_KEY.exec(part)).map((m) => m && { kid: m[1]!, key: m[2]! });
      if (keys.length === 0 || keys.some((k) => k === null)) {
        ctx.addIssue({
          code: "custom",
          message:
            "ENV_ENCRYPTION_KEY must be 32 random bytes in base64 (44 characters), or a comma-separated list of <kid>:<32 bytes in base64>, newest first",
        });
        return z.NEVER;
      }
      const parsed = keys.map((k) => k!);
      if (new Set(parsed.map((k) => k.kid)).size !== parsed.length) {
        ctx.addIssue({ code: "custom", message: "ENV_ENCRYPTION_KEY has two keys with the same kid" });
        return z.NEVER;
      }
      return parsed;
    });
