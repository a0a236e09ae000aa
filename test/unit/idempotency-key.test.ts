import { describe, expect, it } from "vitest";
import { readIdempotencyKey } from "../../src/admin/idempotency-key";

// Issue 20, "Also": operator credits accept an `Idempotency-Key` header (IETF draft form: a
// string, bare or quoted). Absent: no idempotency; malformed: 400 naming the header.
describe("readIdempotencyKey", () => {
  it.each<[string | undefined, string | null]>([
    [undefined, null],
    ["8e03978e-40d5-43e8-bc93-6894a57f9324", "8e03978e-40d5-43e8-bc93-6894a57f9324"],
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', "8e03978e-40d5-43e8-bc93-6894a57f9324"],
    ["  transfer-7781  ", "transfer-7781"],
    ["x".repeat(255), "x".repeat(255)],
    ["a:b/c=d", "a:b/c=d"],
  ])("%j -> key %j", (header, key) => {
    expect(readIdempotencyKey(header)).toEqual({ ok: true, key });
  });

  it.each<[string]>([[""], ["   "], ['""'], ['"'], ["has space"], ['a"b'], ["x".repeat(256)], ["tab\there"], ["é"]])("%j is refused", (header) => {
    const reading = readIdempotencyKey(header);
    expect(reading.ok).toBe(false);
    if (!reading.ok) expect(reading.message).toMatch(/^Idempotency-Key must be 1 to 255 visible ASCII characters/);
  });
});
