import { sha256Hex } from "../lib/encoding";

/**
 * Personal access tokens: `dbx_` + 30 random base62 characters (178 bits) + a 6-character base62
 * CRC32 of the body, the layout GitHub uses so secret scanners can recognise a token and reject
 * typos without asking us. Only the SHA-256 of the whole token is stored.
 */
export const TOKEN_PREFIX = "dbx_";
const BODY_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);
/** How many characters of the token the console may show. */
const VISIBLE_LENGTH = TOKEN_PREFIX.length + 4;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function base62(value: number, width: number): string {
  let out = "";
  for (let v = value; v > 0; v = Math.floor(v / 62)) out = BASE62[v % 62] + out;
  return out.padStart(width, "0");
}

/** Random base62 text; rejection sampling keeps every character uniform. */
function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateToken(): string {
  const body = randomBase62(BODY_LENGTH);
  return TOKEN_PREFIX + body + base62(crc32(body), CHECKSUM_LENGTH);
}

/** True when the text has the token layout and its checksum matches. */
export function isWellFormedToken(text: string): boolean {
  if (!TOKEN_PATTERN.test(text)) return false;
  const body = text.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + BODY_LENGTH);
  return text.slice(-CHECKSUM_LENGTH) === base62(crc32(body), CHECKSUM_LENGTH);
}

/** The part of a token that may be shown again: `dbx_AbCd`. */
export function tokenDisplayPrefix(token: string): string {
  return token.slice(0, VISIBLE_LENGTH);
}

export function hashToken(token: string): Promise<string> {
  return sha256Hex(token);
}
