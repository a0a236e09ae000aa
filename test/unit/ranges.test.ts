import { describe, expect, it } from "vitest";
import { multipartLayout } from "../../src/exports/multipart";
import { type RangeDecision, coalesce, ifRangeAllows, MAX_RANGES, parseRangeHeader } from "../../src/exports/ranges";

const SIZE = 1000;
const full: RangeDecision = { kind: "full" };
const unsatisfiable: RangeDecision = { kind: "unsatisfiable" };
const partial = (...pairs: [number, number][]): RangeDecision => ({
  kind: "partial",
  ranges: pairs.map(([start, end]) => ({ start, end })),
});

describe("parseRangeHeader (RFC 9110 section 14)", () => {
  const cases: [string, string | null, RangeDecision, number?][] = [
    ["no header: whole archive", null, full],
    // 14.1.2: int-range, open int-range, suffix-range
    ["closed range", "bytes=0-499", partial([0, 499])],
    ["single byte", "bytes=0-0", partial([0, 0])],
    ["last byte by position", "bytes=999-999", partial([999, 999])],
    ["open range", "bytes=500-", partial([500, 999])],
    ["suffix range", "bytes=-200", partial([800, 999])],
    ["suffix longer than the archive: all of it", "bytes=-5000", partial([0, 999])],
    ["last-pos past the end is clamped", "bytes=900-5000", partial([900, 999])],
    ["huge last-pos is clamped", "bytes=10-99999999999999999999999", partial([10, 999])],
    // 14.1: the unit is case-insensitive; other units are ignored
    ["unit in capitals", "BYTES=0-9", partial([0, 9])],
    ["another unit is ignored", "items=0-9", full],
    ["no unit", "=0-9", full],
    // invalid syntax: the header is ignored (whole archive)
    ["no equals sign", "bytes 0-9", full],
    ["whitespace before the equals sign", "bytes =0-9", full],
    ["missing dash", "bytes=10", full],
    ["letters", "bytes=a-b", full],
    ["negative first-pos", "bytes=--5", full],
    ["last-pos before first-pos", "bytes=500-400", full],
    ["one invalid spec spoils the header", "bytes=0-9,500-400", full],
    ["plus sign", "bytes=+1-2", full],
    ["only commas", "bytes=,,", full],
    ["empty set", "bytes=", full],
    ["other-range form in bytes", "bytes=0-9;x", full],
    // 1#range-spec: optional whitespace, empty elements
    ["whitespace around commas", "bytes=0-9 ,\t20-29", partial([0, 9], [20, 29])],
    ["empty list elements", "bytes=,0-9,,20-29,", partial([0, 9], [20, 29])],
    // several ranges: request order kept, overlapping and adjacent ones coalesced
    ["two ranges", "bytes=0-9,100-199", partial([0, 9], [100, 199])],
    ["request order kept", "bytes=100-199,0-9", partial([100, 199], [0, 9])],
    ["overlapping ranges merge", "bytes=0-50,40-99", partial([0, 99])],
    ["adjacent ranges merge", "bytes=0-9,10-19", partial([0, 19])],
    ["merge takes the first member's place", "bytes=500-599,0-9,590-700", partial([500, 700], [0, 9])],
    ["a bridge merges three", "bytes=0-9,20-29,5-25", partial([0, 29])],
    ["suffix overlapping a range", "bytes=900-949,-100", partial([900, 999])],
    ["duplicates merge", "bytes=0-9,0-9", partial([0, 9])],
    // unsatisfiable: 416 only when nothing is left
    ["first-pos at the size", "bytes=1000-", unsatisfiable],
    ["first-pos past the size", "bytes=5000-6000", unsatisfiable],
    ["zero-length suffix", "bytes=-0", unsatisfiable],
    ["all unsatisfiable", "bytes=1000-1001,-0,2000-", unsatisfiable],
    ["unsatisfiable ones are dropped", "bytes=2000-3000,0-9", partial([0, 9])],
    // limits
    [`exactly ${MAX_RANGES} ranges`, `bytes=${Array.from({ length: MAX_RANGES }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(",")}`,
      partial(...Array.from({ length: MAX_RANGES }, (_, i) => [i * 10, i * 10 + 1] as [number, number]))],
    [`more than ${MAX_RANGES} ranges are ignored`, `bytes=${Array.from({ length: MAX_RANGES + 1 }, (_, i) => `${i * 10}-${i * 10 + 1}`).join(",")}`, full],
    ["an empty archive is sent whole", "bytes=0-9", full, 0],
  ];

  it.each(cases)("%s: %s", (_name, header, expected, size = SIZE) => {
    expect(parseRangeHeader(header, size)).toEqual(expected);
  });
});

describe("coalesce", () => {
  it("leaves disjoint ranges alone and in order", () => {
    expect(coalesce([{ start: 50, end: 60 }, { start: 0, end: 10 }])).toEqual([{ start: 50, end: 60 }, { start: 0, end: 10 }]);
  });
  it("does not merge ranges with a one-byte gap", () => {
    expect(coalesce([{ start: 0, end: 9 }, { start: 11, end: 20 }])).toHaveLength(2);
  });
});

describe("ifRangeAllows (RFC 9110 section 13.1.5)", () => {
  const etag = '"abc123"';
  it.each([
    ["no If-Range", null, true],
    ["the current strong ETag", '"abc123"', true],
    ["another ETag", '"other"', false],
    ["the weak form of the ETag", 'W/"abc123"', false],
    ["a date", "Sat, 21 Nov 2026 11:00:00 GMT", false],
    ["the unquoted value", "abc123", false],
  ] as const)("%s", (_name, header, expected) => {
    expect(ifRangeAllows(header, etag)).toBe(expected);
  });
});

describe("multipartLayout", () => {
  it("frames each part and counts every byte", () => {
    const layout = multipartLayout([{ start: 0, end: 1 }, { start: 5, end: 7 }], 10, "B", "application/gzip");
    const body =
      "--B\r\nContent-Type: application/gzip\r\nContent-Range: bytes 0-1/10\r\n\r\n" + "xx" +
      "\r\n--B\r\nContent-Type: application/gzip\r\nContent-Range: bytes 5-7/10\r\n\r\n" + "yyy" +
      "\r\n--B--\r\n";
    expect(layout.parts.map((p) => p.head)).toEqual([
      "--B\r\nContent-Type: application/gzip\r\nContent-Range: bytes 0-1/10\r\n\r\n",
      "\r\n--B\r\nContent-Type: application/gzip\r\nContent-Range: bytes 5-7/10\r\n\r\n",
    ]);
    expect(layout.tail).toBe("\r\n--B--\r\n");
    expect(layout.length).toBe(body.length);
    expect(layout.contentType).toBe("multipart/byteranges; boundary=B");
  });
});
