import { describe, expect, it } from "vitest";
import { DUMP_BATCH_ROWS, FIRST_BATCH_ROWS, nextLimit, PAGE_TARGET_BYTES, WHOLE_PAGE_BYTES } from "../../src/databases/dump-reads";

describe("nextLimit: the next page's rows follow the size of the rows read", () => {
  it.each([
    // [asked, came back, filled a chunk, bytes] -> next
    ["a page that filled a chunk: what fit", 32, 5, true, 122_000, 5],
    ["a row larger than a chunk alone", 3, 1, true, 300_000, 1],
    ["the table ended (fewer rows than asked): unchanged", 32, 7, false, 700, 32],
    ["small rows: twice as many, no more", 32, 32, false, 3_200, 64],
    ["narrow rows grow to DUMP_BATCH_ROWS", 1600, 1600, false, 48_000, DUMP_BATCH_ROWS],
    ["rows of 2 KiB: as many as come to the target", 32, 32, false, 65_536, 32],
    ["rows of 3 KiB: fewer, to stay under the target", 32, 32, false, 98_304, 21],
    ["rows of 40 KiB: one", 2, 2, false, 81_920, 1],
    ["rows larger than the target: one", 1, 1, false, 100_000, 1],
  ])("%s", (_, limit, rows, full, bytes, next) => {
    expect(nextLimit(limit, rows, full, bytes)).toBe(next);
  });

  it("leaves room under WHOLE_PAGE_BYTES for rows half again as large as those read", () => {
    expect(PAGE_TARGET_BYTES * 1.5).toBeLessThanOrEqual(WHOLE_PAGE_BYTES);
    expect(FIRST_BATCH_ROWS).toBeLessThanOrEqual(DUMP_BATCH_ROWS);
  });

  it("aims every page at or under the target when rows keep their size", () => {
    for (const rowBytes of [20, 61, 120, 197, 500, 2_700, 9_000, 70_000]) {
      let limit = FIRST_BATCH_ROWS;
      for (let page = 0; page < 12; page++) {
        const bytes = limit * rowBytes;
        limit = nextLimit(limit, limit, false, bytes);
        if (page > 0) expect(limit === 1 || limit * rowBytes <= PAGE_TARGET_BYTES).toBe(true);
      }
    }
  });
});
