import { describe, expect, it } from "vitest";
import {
  canonicalLinkString,
  createDownloadLink,
  downloadPath,
  signDownloadLink,
  verifyDownloadLink,
} from "../../src/auth/links";
import type { SigningKey } from "../../src/config";

// Signed download links: SPEC.md endpoint 2 (`exp` and `sig` carry the authorisation) and
// "Download link validity" (valid until `exp`, afterwards 401 SIGNED_URL_EXPIRED).

const NEW_KEY: SigningKey = { kid: "k2", secret: "unit-test-secret-two-0123456789abcdef" };
const OLD_KEY: SigningKey = { kid: "k1", secret: "unit-test-secret-one-0123456789abcdef" };
const KEYS = [NEW_KEY, OLD_KEY];

const DB = "0b8f1a4e-3c2d-4e5f-8a9b-0c1d2e3f4a5b";
const EXPORT = "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9";
const PATH = downloadPath(DB, EXPORT);
const EXP = 1_900_000_000;
const BEFORE = (EXP - 60) * 1000;

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Every string that differs from `text` in exactly one character, the replacement drawn from `alphabet`. */
function oneCharTampers(text: string, alphabet: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i++) {
    for (const ch of alphabet) if (ch !== text[i]) out.push(text.slice(0, i) + ch + text.slice(i + 1));
  }
  return out;
}

describe("download link signing", () => {
  it("builds the path of SPEC.md's link shape", () => {
    expect(PATH).toBe(`/api/v1/dbs/${DB}/exports/${EXPORT}/download`);
  });

  it("covers method, full path and exp in the canonical string", () => {
    expect(canonicalLinkString("get", PATH, "123")).toBe(`dbx-download-v1\nGET\n${PATH}\n123`);
  });

  it("round-trips: a signed link verifies and gives back exp", async () => {
    const sig = await signDownloadLink(KEYS, { path: PATH, exp: EXP });
    expect(sig).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(await verifyDownloadLink(KEYS, { path: PATH, exp: String(EXP), sig, now: BEFORE })).toEqual({ ok: true, exp: EXP });
  });

  it("rejects every single-character change of the signature", async () => {
    const sig = await signDownloadLink(KEYS, { path: PATH, exp: EXP });
    const tampered = oneCharTampers(sig, B64URL);
    expect(tampered).toHaveLength(sig.length * (B64URL.length - 1));
    for (const bad of tampered) {
      const verdict = await verifyDownloadLink(KEYS, { path: PATH, exp: String(EXP), sig: bad, now: BEFORE });
      expect(verdict, bad).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
    }
  });

  it("rejects every single-character change of the path", async () => {
    const sig = await signDownloadLink(KEYS, { path: PATH, exp: EXP });
    for (const bad of oneCharTampers(PATH, "0a9fF-/xE")) {
      const verdict = await verifyDownloadLink(KEYS, { path: bad, exp: String(EXP), sig, now: BEFORE });
      expect(verdict, bad).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
    }
  });

  it("rejects every single-character change of exp, including a later expiry", async () => {
    const sig = await signDownloadLink(KEYS, { path: PATH, exp: EXP });
    for (const bad of oneCharTampers(String(EXP), "0123456789-+ e.")) {
      const verdict = await verifyDownloadLink(KEYS, { path: PATH, exp: bad, sig, now: BEFORE });
      expect(verdict, bad).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
    }
  });

  it.each([
    ["missing sig", { exp: String(EXP), sig: null }],
    ["missing exp", { exp: null, sig: "SIG" }],
    ["empty sig", { exp: String(EXP), sig: "" }],
    ["exp with a leading zero", { exp: `0${EXP}`, sig: "SIG" }],
    ["exp with a sign", { exp: `+${EXP}`, sig: "SIG" }],
    ["exp in exponent form", { exp: "1.9e9", sig: "SIG" }],
    ["padded base64 sig", { exp: String(EXP), sig: "SIG=" }],
  ])("answers SIGNED_URL_INVALID for %s", async (_name, query) => {
    const sig = await signDownloadLink(KEYS, { path: PATH, exp: EXP });
    const verdict = await verifyDownloadLink(KEYS, {
      path: PATH,
      exp: query.exp,
      sig: query.sig === null ? null : query.sig.replace("SIG", sig),
      now: BEFORE,
    });
    expect(verdict).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
  });

  it("does not accept a GET link for another method", async () => {
    const sig = await signDownloadLink(KEYS, { path: PATH, exp: EXP });
    const verdict = await verifyDownloadLink(KEYS, { path: PATH, exp: String(EXP), sig, now: BEFORE, method: "DELETE" });
    expect(verdict).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
  });

  it.each([
    ["signed with the newest key, both configured", [NEW_KEY], KEYS, true],
    ["signed with the previous key, both configured", [OLD_KEY], KEYS, true],
    ["signed with a key that was removed", [OLD_KEY], [NEW_KEY], false],
    ["signed with an unknown key of a known kid", [{ kid: "k2", secret: "x".repeat(40) }], KEYS, false],
  ] as const)("key rotation: %s -> valid %s", async (_name, signWith, accept, valid) => {
    const sig = await signDownloadLink(signWith, { path: PATH, exp: EXP });
    const verdict = await verifyDownloadLink(accept, { path: PATH, exp: String(EXP), sig, now: BEFORE });
    expect(verdict.ok).toBe(valid);
  });

  it("signs with the first (newest) key", async () => {
    const withBoth = await signDownloadLink(KEYS, { path: PATH, exp: EXP });
    expect(withBoth).toBe(await signDownloadLink([NEW_KEY], { path: PATH, exp: EXP }));
  });

  it.each([
    ["a minute before exp", (EXP - 60) * 1000, { ok: true, exp: EXP }],
    ["at the exact second exp", EXP * 1000, { ok: true, exp: EXP }],
    ["one millisecond after exp", EXP * 1000 + 1, { ok: false, code: "SIGNED_URL_EXPIRED" }],
    ["a day after exp", (EXP + 86400) * 1000, { ok: false, code: "SIGNED_URL_EXPIRED" }],
  ])("expiry boundary: %s", async (_name, now, expected) => {
    const sig = await signDownloadLink(KEYS, { path: PATH, exp: EXP });
    expect(await verifyDownloadLink(KEYS, { path: PATH, exp: String(EXP), sig, now })).toEqual(expected);
  });

  // A genuine signature is remembered per isolate, so a poll does not compute the HMAC again.
  describe("a signature remembered as genuine", () => {
    it("is refused once its key is taken out of the configuration, or its kid names another secret", async () => {
      const sig = await signDownloadLink([OLD_KEY], { path: PATH, exp: EXP });
      const request = { path: PATH, exp: String(EXP), sig, now: BEFORE };
      expect(await verifyDownloadLink(KEYS, request)).toEqual({ ok: true, exp: EXP });
      expect(await verifyDownloadLink([NEW_KEY], request)).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
      const sameKidOtherSecret = { kid: OLD_KEY.kid, secret: "unit-test-secret-three-0123456789abcd" };
      expect(await verifyDownloadLink([sameKidOtherSecret], request)).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
      // The same secret under another id is another key: the id inside the signature names none.
      const sameSecretOtherKid = { kid: "renamed", secret: OLD_KEY.secret };
      expect(await verifyDownloadLink([sameSecretOtherKid], request)).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
    });

    it("still expires, and covers only the path, exp and method it was checked for", async () => {
      const sig = await signDownloadLink(KEYS, { path: PATH, exp: EXP });
      expect(await verifyDownloadLink(KEYS, { path: PATH, exp: String(EXP), sig, now: BEFORE })).toEqual({ ok: true, exp: EXP });
      expect(await verifyDownloadLink(KEYS, { path: PATH, exp: String(EXP), sig, now: EXP * 1000 + 1 })).toEqual({ ok: false, code: "SIGNED_URL_EXPIRED" });
      expect(await verifyDownloadLink(KEYS, { path: PATH, exp: String(EXP + 1), sig, now: BEFORE })).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
      expect(await verifyDownloadLink(KEYS, { path: downloadPath(DB, DB), exp: String(EXP), sig, now: BEFORE })).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
      expect(await verifyDownloadLink(KEYS, { path: PATH, exp: String(EXP), sig, now: BEFORE, method: "DELETE" })).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
    });
  });

  it("checks the signature before expiry: a forged expired link is invalid, not expired", async () => {
    const verdict = await verifyDownloadLink(KEYS, { path: PATH, exp: "1000", sig: "AAAA", now: BEFORE });
    expect(verdict).toEqual({ ok: false, code: "SIGNED_URL_INVALID" });
  });

  it("creates the whole link: origin, path, exp = now + ttl, expires_at the same instant", async () => {
    const now = Date.UTC(2030, 0, 2, 3, 4, 5, 678);
    const link = await createDownloadLink({ keys: KEYS, origin: "https://api.example.com", databaseId: DB, exportId: EXPORT, now, ttlSeconds: 1800 });
    const url = new URL(link.url);
    expect(url.origin + url.pathname).toBe(`https://api.example.com${PATH}`);
    expect(link.exp).toBe(Math.floor(now / 1000) + 1800);
    expect(url.searchParams.get("exp")).toBe(String(link.exp));
    expect(link.expiresAt).toBe("2030-01-02T03:34:05.000Z");
    const sig = url.searchParams.get("sig");
    expect(await verifyDownloadLink(KEYS, { path: url.pathname, exp: url.searchParams.get("exp"), sig, now })).toEqual({ ok: true, exp: link.exp });
  });
});
