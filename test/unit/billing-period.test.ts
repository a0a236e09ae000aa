import { describe, expect, it } from "vitest";
import { addOneMonth } from "../../src/billing/period";

// Issue 13: "A paid period runs from the charge to the same time one calendar month later
// (clamped to the month's last day, UTC)".
const at = (s: string) => Date.parse(s);

describe("addOneMonth", () => {
  it.each([
    ["2030-01-15T10:20:30.456Z", "2030-02-15T10:20:30.456Z"],
    ["2030-01-31T23:59:59.999Z", "2030-02-28T23:59:59.999Z"],
    ["2028-01-31T00:00:00.000Z", "2028-02-29T00:00:00.000Z"],
    ["2028-02-29T12:00:00.000Z", "2028-03-29T12:00:00.000Z"],
    ["2030-03-31T08:00:00.000Z", "2030-04-30T08:00:00.000Z"],
    ["2030-12-31T18:00:00.000Z", "2031-01-31T18:00:00.000Z"],
    ["2030-12-15T00:00:00.000Z", "2031-01-15T00:00:00.000Z"],
    ["2030-03-30T01:30:00.000Z", "2030-04-30T01:30:00.000Z"],
    ["2100-01-31T00:00:00.000Z", "2100-02-28T00:00:00.000Z"],
  ])("%s -> %s", (from, to) => {
    expect(new Date(addOneMonth(at(from))).toISOString()).toBe(to);
  });
});
