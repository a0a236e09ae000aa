import { describe, expect, it } from "vitest";
import {
  DUPLICATE_KEY_MESSAGE,
  INVALID_KEY_MESSAGE,
  MAX_VALUE_BYTES,
  VALUE_TOO_LARGE_MESSAGE,
  rowMessages,
  validateVariables,
} from "../../src/envvars/rules";

// SPEC.md, Resources "Environment variable": "Key: uppercase letters, digits and underscores, not
// starting with a digit. Value: up to 64 KiB." Limits: reserved keys "exactly PORT, PATH, HOME,
// HOSTNAME, USER; match is exact, so PORTAL, MY_PATH etc. are accepted". Errors "Console validation
// messages": the three sentences, and "A lowercase spelling of a reserved name shows both messages
// on the one row."

describe("rowMessages", () => {
  it.each<[string, string, string[]]>([
    ["uppercase key", "DATABASE_URL", []],
    ["key with digits", "S3_BUCKET2", []],
    ["key starting with an underscore", "_PRIVATE", []],
    ["PORTAL (reserved match is exact)", "PORTAL", []],
    ["MY_PATH (reserved match is exact)", "MY_PATH", []],
    ["HOME_DIR (reserved match is exact)", "HOME_DIR", []],
    ["PORT is reserved", "PORT", ["PORT is reserved by the platform."]],
    ["PATH is reserved", "PATH", ["PATH is reserved by the platform."]],
    ["HOME is reserved", "HOME", ["HOME is reserved by the platform."]],
    ["HOSTNAME is reserved", "HOSTNAME", ["HOSTNAME is reserved by the platform."]],
    ["USER is reserved", "USER", ["USER is reserved by the platform."]],
    ["port: both messages on the one row", "port", ["port is reserved by the platform.", INVALID_KEY_MESSAGE]],
    ["Path: both messages on the one row", "Path", ["Path is reserved by the platform.", INVALID_KEY_MESSAGE]],
    ["lowercase key", "database_url", [INVALID_KEY_MESSAGE]],
    ["key starting with a digit", "1PASSWORD", [INVALID_KEY_MESSAGE]],
    ["key with a hyphen", "API-KEY", [INVALID_KEY_MESSAGE]],
    ["key with a space", "API KEY", [INVALID_KEY_MESSAGE]],
    ["empty key", "", [INVALID_KEY_MESSAGE]],
  ])("%s", (_, key, messages) => {
    expect(rowMessages({ key, value: "x" })).toEqual(messages);
  });

  it("states the invalid-key and oversized-value sentences word for word", () => {
    expect(INVALID_KEY_MESSAGE).toBe("Use uppercase letters, digits, and underscores for the key.");
    expect(VALUE_TOO_LARGE_MESSAGE).toBe("This value exceeds the 64 KiB limit.");
    expect(MAX_VALUE_BYTES).toBe(65_536);
  });

  it.each<[string, string, string[]]>([
    ["65,536 bytes of ASCII is accepted", "a".repeat(65_536), []],
    ["65,537 bytes of ASCII is refused", "a".repeat(65_537), [VALUE_TOO_LARGE_MESSAGE]],
    ["65,536 bytes as 32,768 two-byte characters is accepted", "é".repeat(32_768), []],
    ["65,537 bytes (one two-byte character over, 32,769 characters) is refused", "é".repeat(32_768) + "a", [VALUE_TOO_LARGE_MESSAGE]],
    ["65,536 bytes as 16,384 four-byte characters is accepted", "😀".repeat(16_384), []],
    ["an empty value is accepted", "", []],
  ])("value: %s", (_, value, messages) => {
    expect(rowMessages({ key: "BLOB", value })).toEqual(messages);
  });

  it("shows every message of a row at once: reserved spelling, key and value", () => {
    expect(rowMessages({ key: "user", value: "a".repeat(65_537) })).toEqual([
      "user is reserved by the platform.",
      INVALID_KEY_MESSAGE,
      VALUE_TOO_LARGE_MESSAGE,
    ]);
  });
});

describe("validateVariables", () => {
  it("reports every invalid row with its index, key and messages, and nothing for valid rows", () => {
    expect(
      validateVariables([
        { key: "OK", value: "1" },
        { key: "PORT", value: "80" },
        { key: "port", value: "80" },
        { key: "BIG", value: "a".repeat(65_537) },
      ]),
    ).toEqual([
      { row: 1, key: "PORT", messages: ["PORT is reserved by the platform."] },
      { row: 2, key: "port", messages: ["port is reserved by the platform.", INVALID_KEY_MESSAGE] },
      { row: 3, key: "BIG", messages: [VALUE_TOO_LARGE_MESSAGE] },
    ]);
  });

  it("refuses a key used by two rows, under the later row", () => {
    expect(validateVariables([{ key: "A", value: "1" }, { key: "A", value: "2" }])).toEqual([{ row: 1, key: "A", messages: [DUPLICATE_KEY_MESSAGE] }]);
  });

  it("numbers rows as the caller shows them (a paste's line numbers)", () => {
    expect(validateVariables([{ key: "ok", value: "" }], () => 7)).toEqual([{ row: 7, key: "ok", messages: [INVALID_KEY_MESSAGE] }]);
  });
});
