import { describe, expect, it } from "vitest";
import { HEIGHT, WIDTH, lineSegments, niceCeiling, xOf, yOf } from "../../src/metrics/chart";

// docs/metrics.md, "Console": the charts' scale and lines.

describe("top of scale", () => {
  it.each([
    [0, 1], [-3, 1], [0.3, 0.5], [1, 1], [1.2, 2], [3, 5], [7, 10], [42, 50], [100, 100], [101, 200], [268435456, 500000000],
  ])("%f -> %f", (value, top) => expect(niceCeiling(value)).toBe(top));
});

describe("lines", () => {
  it("places points across the width and from the bottom up", () => {
    expect([xOf(0, 3), xOf(1, 3), xOf(2, 3), xOf(0, 1)]).toEqual([0, WIDTH / 2, WIDTH, WIDTH / 2]);
    expect([yOf(0, 10), yOf(10, 10), yOf(5, 10), yOf(20, 10)]).toEqual([HEIGHT, 0, HEIGHT / 2, 0]);
  });

  it.each([
    [[1, 2, 3], 1],
    [[1, null, 3], 2],
    [[null, null], 0],
    [[null, 1, 2, null, null, 4, 5], 2],
  ] as const)("%j breaks into %i runs at its gaps", (values, runs) => expect(lineSegments(values, 5)).toHaveLength(runs));
});
