/**
 * The disk allowance rule (src/apps/disk-watch.ts): an instance past its plan's disk allowance (or a
 * test's override) is restarted fresh, with the reason the app page and JSON show.
 */
import { describe, expect, it } from "vitest";
import { diskVerdict, formatAllowance } from "../../src/apps/disk-watch";
import { PLANS, PLAN_IDS, planDiskBytes } from "../../src/apps/plans";

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

describe("planDiskBytes", () => {
  it.each([
    ["lite", 2 * GiB],
    ["starter", 5 * GiB],
    ["pro", 10 * GiB],
  ] as const)("%s: %d bytes", (plan, bytes) => expect(planDiskBytes(plan)).toBe(bytes));
  it("every plan has one", () => expect(PLAN_IDS.every((id) => PLANS[id].diskGb > 0)).toBe(true));
});

describe("diskVerdict", () => {
  it.each<[string, string, number, number, string | null]>([
    ["within the plan's allowance", "lite", 1 * GiB, 0, null],
    ["exactly the allowance", "lite", 2 * GiB, 0, null],
    ["one byte past it", "lite", 2 * GiB + 1, 0, "Restarted: the instance wrote more than its plan's 2 GiB of disk."],
    ["a 3 GiB write on lite", "lite", 3 * GiB, 0, "Restarted: the instance wrote more than its plan's 2 GiB of disk."],
    ["a 3 GiB write on starter", "starter", 3 * GiB, 0, null],
    ["past pro's", "pro", 11 * GiB, 0, "Restarted: the instance wrote more than its plan's 10 GiB of disk."],
    ["a test's override", "pro", 20 * MiB, 10 * MiB, "Restarted: the instance wrote more than its 10 MiB of disk."],
    ["within the override", "lite", 5 * MiB, 10 * MiB, null],
    ["an unknown plan without an override is never restarted", "gold", 50 * GiB, 0, null],
  ])("%s", (_name, plan, written, override, reason) => expect(diskVerdict(plan, written, override)).toBe(reason));
});

describe("formatAllowance", () => {
  it.each([
    [2 * GiB, "2 GiB"],
    [10 * MiB, "10 MiB"],
    [1536 * MiB, "1536 MiB"],
    [1000, "1000 bytes"],
  ])("%d bytes: %s", (bytes, text) => expect(formatAllowance(bytes)).toBe(text));
});
