import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { getConfig } from "../../config";
import { noteRefused } from "../../audit/note";
import type { AppEnv } from "../../http/context";
import { fromBase64, fromBase64Url, randomBytes, toBase64Url, utf8 } from "../../lib/encoding";

/**
 * One-shot messages carried across a POST-redirect-GET: a notice, an error, or the secret of a
 * token just created. The cookie is AES-GCM encrypted (so the secret is never readable at rest in
 * the browser), bound to the account, lives a minute at most and is deleted by the page that shows
 * it, so a reload never shows it again.
 */
export interface Flash {
  notice?: string;
  error?: string;
  secret?: { name: string; token: string };
  /** Shown inside this section of the page (where the action was) instead of at the top. */
  section?: "exports" | "environment";
}

const COOKIE = "console_flash";
const PATH = "/console";
const TTL_SECONDS = 60;
const IV_BYTES = 12;

interface Sealed extends Flash {
  /** The account the flash belongs to ("" before sign-in). */
  a: string;
  /** Expiry, Unix milliseconds. */
  x: number;
}

const keys = new WeakMap<object, Promise<CryptoKey>>();

/** A key for flashes only, derived (HKDF) from the newest ENV_ENCRYPTION_KEY so no key serves two purposes. */
function flashKey(env: Env): Promise<CryptoKey> {
  let key = keys.get(env);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", fromBase64(getConfig(env).ENV_ENCRYPTION_KEY[0]!.key), "HKDF", false, ["deriveKey"])
      .then((master) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: utf8("console-flash-v1") },
          master,
          { name: "AES-GCM", length: 256 },
          false,
          ["encrypt", "decrypt"],
        ),
      );
    keys.set(env, key);
  }
  return key;
}

const isHttps = (c: Context) => new URL(c.req.url).protocol === "https:";

/** Sets the flash the next console page shows. */
export async function setFlash(c: Context<AppEnv>, flash: Flash): Promise<void> {
  if (flash.error) noteRefused(c);
  const sealed: Sealed = { ...flash, a: c.get("accountId") ?? "", x: c.get("deps").now() + TTL_SECONDS * 1000 };
  const iv = randomBytes(IV_BYTES);
  const cipher = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await flashKey(c.env), utf8(JSON.stringify(sealed)));
  const packed = new Uint8Array(IV_BYTES + cipher.byteLength);
  packed.set(iv);
  packed.set(new Uint8Array(cipher), IV_BYTES);
  setCookie(c, COOKIE, toBase64Url(packed), {
    httpOnly: true,
    sameSite: "Lax",
    secure: isHttps(c),
    path: PATH,
    maxAge: TTL_SECONDS,
  });
}

/** Reads and deletes the flash; null when there is none, it expired, or it is another account's. */
export async function takeFlash(c: Context<AppEnv>): Promise<Flash | null> {
  const value = getCookie(c, COOKIE);
  if (value === undefined) return null;
  deleteCookie(c, COOKIE, { path: PATH, secure: isHttps(c) });
  const packed = value.length < 4096 ? fromBase64Url(value) : null;
  if (!packed || packed.length <= IV_BYTES) return null;
  let sealed: Sealed;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: packed.slice(0, IV_BYTES) },
      await flashKey(c.env),
      packed.slice(IV_BYTES),
    );
    sealed = JSON.parse(new TextDecoder().decode(plain)) as Sealed;
  } catch {
    return null;
  }
  if (sealed.a !== (c.get("accountId") ?? "") || sealed.x <= c.get("deps").now()) return null;
  const { notice, error, secret, section } = sealed;
  return { notice, error, secret, section };
}
