import type { SigningKey } from "../config";
import { fromBase64Url, toBase64Url, utf8 } from "../lib/encoding";
import { iso } from "../lib/time";

/**
 * Signed download links (docs/api.md, export rule 1): `?exp=<unix seconds>&sig=<signature>`.
 *
 * The signature is HMAC-SHA256 over a canonical string naming the method, the full path (so the
 * database id and the export id) and `exp`. It travels as base64url of
 * `[kid length: 1 byte][kid: UTF-8][mac: 32 bytes]`, so a verifier knows which key signed it and
 * keys can be rotated: sign with the newest, accept every configured one. No I/O, no clock: the
 * caller passes the time, so tests move it.
 */

/** Bumped if the canonical string ever changes, so an old signature can never match a new layout. */
const CANONICAL_VERSION = "dbx-download-v1";
/** HMAC-SHA256 output length. */
const MAC_BYTES = 32;
/** `exp` as sent: plain decimal, no sign, no leading zero, so one expiry has exactly one spelling. */
const EXP_PATTERN = /^[1-9][0-9]{0,15}$/;

export type LinkFailure = "SIGNED_URL_INVALID" | "SIGNED_URL_EXPIRED";

/** The outcome of checking a link: `exp` when it holds, else the spec's error code. */
export type LinkVerdict = { ok: true; exp: number } | { ok: false; code: LinkFailure };

/** The path (no origin, no query) of an export's download link. */
export function downloadPath(databaseId: string, exportId: string): string {
  return `/api/v1/dbs/${databaseId}/exports/${exportId}/download`;
}

/**
 * The text a signature covers. Lines cannot be forged into one another: a URL path has its
 * newlines percent-encoded and `exp` is digits only.
 */
export function canonicalLinkString(method: string, path: string, exp: string): string {
  return [CANONICAL_VERSION, method.toUpperCase(), path, exp].join("\n");
}

/** Imported keys, per secret: importing one costs about as much as the HMAC itself. */
const importedKeys = new Map<string, Promise<CryptoKey>>();

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = importedKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", utf8(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    // A handful of keys at most (rotation); a failed import is not kept.
    if (importedKeys.size >= 16) importedKeys.clear();
    importedKeys.set(secret, key);
    key.catch(() => importedKeys.delete(secret));
  }
  return key;
}

/**
 * Signs `method path exp` with the first (newest) key and returns the `sig` query value.
 * `exp` is the link's expiry in Unix seconds.
 */
export async function signDownloadLink(
  keys: readonly SigningKey[],
  link: { path: string; exp: number; method?: string },
): Promise<string> {
  const key = keys[0];
  if (!key) throw new Error("No link signing key is configured.");
  const canonical = canonicalLinkString(link.method ?? "GET", link.path, String(link.exp));
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(key.secret), utf8(canonical)));
  const kid = utf8(key.kid);
  const packed = new Uint8Array(1 + kid.length + MAC_BYTES);
  packed[0] = kid.length;
  packed.set(kid, 1);
  packed.set(mac, 1 + kid.length);
  return toBase64Url(packed);
}

/** Splits a `sig` value into key id and MAC; null for anything not produced by signDownloadLink. */
function unpackSignature(sig: string): { kid: string; mac: Uint8Array<ArrayBuffer> } | null {
  const bytes = fromBase64Url(sig);
  if (!bytes || bytes.length < 1) return null;
  const kidLength = bytes[0]!;
  if (kidLength === 0 || bytes.length !== 1 + kidLength + MAC_BYTES) return null;
  return {
    kid: new TextDecoder().decode(bytes.subarray(1, 1 + kidLength)),
    mac: bytes.slice(1 + kidLength),
  };
}

/**
 * Signatures found genuine, per secret and signed text: a script polls one link every few seconds,
 * and each poll would otherwise compute the same HMAC again. Only genuine ones are kept (a forged
 * signature is checked in full every time), the secret is part of the entry (a key taken out of
 * the configuration no longer matches), and expiry is checked on every request all the same.
 */
const genuineLinks = new Set<string>();
/** Bound on the remembered signatures: the set is cleared when it grows past this. */
const GENUINE_LINKS_KEPT = 1000;
/** A remembered signature's entry: the key (id and secret: the id in `sig` must name it), the signature and the signed text. */
const remembered = (key: SigningKey, sig: string, canonical: string) => `${key.kid}\n${key.secret}\n${sig}\n${canonical}`;

/**
 * Checks a download request's `exp` and `sig` (raw query values, null when absent) for `path`
 * (the request URL's pathname, exactly as received). The signature is checked first, in constant
 * time with `crypto.subtle.verify`; only a genuine link can be told it has expired. A link is
 * valid up to and including the second `exp`; at `now` (Unix ms) later than that it is expired.
 * Pass method "GET" for HEAD requests too: the link is signed for GET.
 */
export async function verifyDownloadLink(
  keys: readonly SigningKey[],
  request: { path: string; exp: string | null; sig: string | null; now: number; method?: string },
): Promise<LinkVerdict> {
  const invalid: LinkVerdict = { ok: false, code: "SIGNED_URL_INVALID" };
  if (request.exp === null || request.sig === null || !EXP_PATTERN.test(request.exp)) return invalid;
  const canonical = canonicalLinkString(request.method ?? "GET", request.path, request.exp);
  const sig = request.sig;
  // A signature remembered under a configured key's secret was found genuine for that key (the
  // key id is inside `sig`), so it needs neither decoding nor an HMAC again.
  if (!keys.some((k) => genuineLinks.has(remembered(k, sig, canonical)))) {
    const unpacked = unpackSignature(sig);
    const key = unpacked && keys.find((k) => k.kid === unpacked.kid);
    if (!unpacked || !key) return invalid;
    const genuine = await crypto.subtle.verify("HMAC", await hmacKey(key.secret), unpacked.mac, utf8(canonical));
    if (!genuine) return invalid;
    if (genuineLinks.size >= GENUINE_LINKS_KEPT) genuineLinks.clear();
    genuineLinks.add(remembered(key, sig, canonical));
  }
  const exp = Number(request.exp);
  if (request.now > exp * 1000) return { ok: false, code: "SIGNED_URL_EXPIRED" };
  return { ok: true, exp };
}

/** A complete signed link for an export, as the start-export reply gives it. */
export interface DownloadLink {
  url: string;
  /** Unix seconds. */
  exp: number;
  /** The same instant as `exp`, ISO 8601 UTC. */
  expiresAt: string;
}

/**
 * Builds the link for an export: `{origin}{downloadPath}?exp=&sig=`, valid for `ttlSeconds`
 * from `now` (Unix ms, rounded down to the second).
 */
export async function createDownloadLink(input: {
  keys: readonly SigningKey[];
  origin: string;
  databaseId: string;
  exportId: string;
  now: number;
  ttlSeconds: number;
}): Promise<DownloadLink> {
  const path = downloadPath(input.databaseId, input.exportId);
  const exp = Math.floor(input.now / 1000) + input.ttlSeconds;
  const sig = await signDownloadLink(input.keys, { path, exp });
  return { url: `${input.origin}${path}?exp=${exp}&sig=${sig}`, exp, expiresAt: iso(exp * 1000) };
}
