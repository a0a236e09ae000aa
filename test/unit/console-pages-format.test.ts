import { observedStatus } from "../../src/exports/export-state";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldErrors } from "../../src/console/pages/forms";
import {
  FALLBACK_LOCALE,
  HOME_PATH,
  describeWait,
  formatBytes,
  formatDateTime,
  formatUtcExact,
  pickLocale,
  safeNext,
  shortDigest,
} from "../../src/console/pages/format";

describe("formatBytes: sizes human-readable (issue 6, Screens)", () => {
  it.each([
    [0, "0 B"],
    [1, "1 B"],
    [1023, "1023 B"],
    [1024, "1.0 KiB"],
    [1536, "1.5 KiB"],
    [10 * 1024 - 52, "9.9 KiB"],
    [10 * 1024 - 51, "10 KiB"],
    [1024 * 1024 - 1, "1.0 MiB"],
    [5 * 1024 * 1024, "5.0 MiB"],
    [123_456_789, "118 MiB"],
    [10 * 1024 ** 3, "10 GiB"],
    [2 * 1024 ** 4, "2.0 TiB"],
    [3 * 1024 ** 6, "3072 PiB"],
    [-1, "unknown size"],
    [Number.NaN, "unknown size"],
  ])("%d bytes -> %s", (bytes, shown) => {
    expect(formatBytes(bytes)).toBe(shown);
  });
});

describe("dates: viewer's locale, exact UTC on hover (issue 6, Screens)", () => {
  it.each([
    ["2026-11-21T09:05:03.123Z", "2026-11-21 09:05:03 UTC"],
    ["2030-01-01T00:00:00.000Z", "2030-01-01 00:00:00 UTC"],
  ])("exact %s -> %s", (iso, exact) => {
    expect(formatUtcExact(iso)).toBe(exact);
  });

  it.each([
    ["2026-11-21T09:05:03.123Z", "en-GB", "21 Nov 2026, 09:05 UTC"],
    ["2026-11-21T09:05:03.123Z", "de-DE", "21.11.2026, 09:05 UTC"],
    ["2026-11-21T21:05:03.123Z", "en-US", "Nov 21, 2026, 9:05 PM UTC"],
    ["2026-11-21T09:05:03.123Z", "fr-FR", "21 nov. 2026, 09:05 UTC"],
    ["not a date", "en-GB", "not a date"],
  ])("%s in %s -> %s", (iso, locale, shown) => {
    expect(formatDateTime(iso, locale)).toBe(shown);
  });

  it.each([
    [undefined, FALLBACK_LOCALE],
    ["", FALLBACK_LOCALE],
    ["de-DE,de;q=0.9,en;q=0.8", "de-DE"],
    ["en;q=0.5, fr-CA;q=0.9", "fr-CA"],
    ["*", FALLBACK_LOCALE],
    ["xx-invalid-tag-that-is-long;q=1, es", "es"],
    ["de;q=0, it", "it"],
    ["<script>, ja-JP", "ja-JP"],
    ["pt-BR;q=0.7,en-US;q=0.7", "pt-BR"],
  ])("Accept-Language %s -> %s", (header, locale) => {
    expect(pickLocale(header)).toBe(locale);
  });
});

describe("describeWait: cooldown and in-flight waits in words", () => {
  it.each([
    [0, "1 second"],
    [0.2, "1 second"],
    [1, "1 second"],
    [5, "5 seconds"],
    [60, "1 minute"],
    [61, "1 minute 1 second"],
    [250, "4 minutes 10 seconds"],
    [300, "5 minutes"],
    [3600, "1 hour"],
    [3900, "1 hour 5 minutes"],
    [7322, "2 hours 2 minutes"],
  ])("%d s -> %s", (seconds, words) => {
    expect(describeWait(seconds)).toBe(words);
  });
});

describe("safeNext: sign-in only returns into the console", () => {
  it.each([
    [undefined, HOME_PATH],
    ["/console/profile", "/console/profile"],
    ["/console/databases/abc?x=1", "/console/databases/abc?x=1"],
    ["/console", "/console"],
    ["//evil.example/console/", HOME_PATH],
    ["/console//evil.example", HOME_PATH],
    ["/\\evil.example", HOME_PATH],
    ["/console/\\evil", HOME_PATH],
    ["https://evil.example/console/", HOME_PATH],
    ["/consolex", HOME_PATH],
    ["/api/v1/dbs", HOME_PATH],
    [`/console/${"a".repeat(600)}`, HOME_PATH],
  ])("%s -> %s", (raw, target) => {
    expect(safeNext(raw)).toBe(target);
  });
});

describe("observedStatus: a ready export past retention shows as expired", () => {
  const retention = 3600;
  it.each([
    ["pending", null, 0, "pending"],
    ["running", null, 0, "running"],
    ["failed", 1000, 10_000_000, "failed"],
    ["ready", 1000, 1000 + retention * 1000 - 1, "ready"],
    ["ready", 1000, 1000 + retention * 1000, "expired"],
    ["expired", 1000, 1000, "expired"],
  ] as const)("%s finished at %s, now %d -> %s", (status, finishedAt, now, shown) => {
    expect(observedStatus({ status, finishedAt, deadlineAt: Number.MAX_SAFE_INTEGER }, now, retention)).toBe(shown);
  });
});

describe("fieldErrors and shortDigest", () => {
  it("keeps the first message per field and puts form-wide ones under _form", () => {
    const schema = z.object({ name: z.string().min(2, "too short").max(1, "too long"), age: z.number({ message: "a number" }) });
    const result = schema.safeParse({ name: "x y z" });
    expect(fieldErrors(result.error!)).toEqual({ name: "too long", age: "a number" });
    expect(fieldErrors(z.string({ message: "text" }).safeParse(1).error!)).toEqual({ _form: "text" });
  });

  it.each([
    ["ab".repeat(32), "abababababab…"],
    ["abcd", "abcd"],
  ])("%s -> %s", (hex, short) => {
    expect(shortDigest(hex)).toBe(short);
  });
});
