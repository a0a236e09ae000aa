import { describe, expect, it } from "vitest";
import { crc32, generateToken, isWellFormedToken, tokenDisplayPrefix } from "../../src/auth/tokens";

describe("personal access token format", () => {
  it("is dbx_ + 30 base62 characters + a 6-character checksum", () => {
    const token = generateToken();
    expect(token).toMatch(/^dbx_[0-9A-Za-z]{36}$/);
    expect(isWellFormedToken(token)).toBe(true);
  });

  it("never repeats", () => {
    const seen = new Set(Array.from({ length: 1000 }, generateToken));
    expect(seen.size).toBe(1000);
  });

  it("computes the standard CRC-32", () => {
    expect(crc32("123456789")).toBe(0xcbf43926);
    expect(crc32("")).toBe(0);
  });

  const token = generateToken();
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "a" ? "b" : "a") + s.slice(i + 1);
  it.each([
    ["empty", ""],
    ["prefix only", "dbx_"],
    ["wrong prefix", "ghp_" + token.slice(4)],
    ["one character short", token.slice(0, -1)],
    ["one character long", token + "a"],
    ["non-base62 character", token.slice(0, 10) + "-" + token.slice(11)],
    ["typo in the body", flip(token, 10)],
    ["typo in the checksum", flip(token, token.length - 1)],
    ["surrounding space", ` ${token}`],
  ])("rejects %s", (_, text) => {
    expect(isWellFormedToken(text)).toBe(false);
  });

  it("shows only the prefix and four characters", () => {
    expect(tokenDisplayPrefix(token)).toBe(token.slice(0, 8));
    expect(tokenDisplayPrefix(token)).toMatch(/^dbx_[0-9A-Za-z]{4}$/);
  });
});
