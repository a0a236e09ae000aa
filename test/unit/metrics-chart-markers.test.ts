import { describe, expect, it } from "vitest";
import { type ChartEvent, MARKER_KINDS, chartMarkers, deployMarkerKind, markerPath, markerTime } from "../../src/metrics/chart-markers";
import { WIDTH } from "../../src/metrics/chart";

// docs/metrics.md, "Console": deploys, restarts and crashes marked on the charts' time axis.

const FROM = Date.UTC(2026, 10, 27, 14, 0) / 1000; // 14:00 UTC
const HOUR = { from: FROM, step: 60, points: 60 };
const at = (minute: number, second = 0) => (FROM + minute * 60 + second) * 1000;
type Row = [string, ChartEvent[], { kind: string; index: number; slot: number; count: number; label: string }[]];

describe("chart markers", () => {
  it.each<Row>([
    ["nothing", [], []],
    ["one deploy", [{ at: at(32, 15), kind: "deploy-live" }], [{ kind: "deploy-live", index: 32, slot: 0, count: 1, label: "Deploy live 14:32 UTC" }]],
    [
      "events before and after the window dropped",
      [{ at: at(-1), kind: "crash" }, { at: at(60), kind: "deploy-failed" }, { at: at(0), kind: "restart" }, { at: at(59, 59), kind: "rollback" }],
      [{ kind: "restart", index: 0, slot: 0, count: 1, label: "Restart 14:00 UTC" }, { kind: "rollback", index: 59, slot: 0, count: 1, label: "Rollback live 14:59 UTC" }],
    ],
    [
      "several of one kind in a step merged with their count, from the earliest",
      [{ at: at(5, 40), kind: "crash", count: 2 }, { at: at(5, 10), kind: "crash" }],
      [{ kind: "crash", index: 5, slot: 0, count: 3, label: "3 crashes 14:05 UTC" }],
    ],
    [
      "different kinds in one step kept distinct, in kind order, stacked",
      [{ at: at(7, 50), kind: "crash" }, { at: at(7, 20), kind: "deploy-live" }, { at: at(7, 30), kind: "deploy-failed" }],
      [
        { kind: "deploy-live", index: 7, slot: 0, count: 1, label: "Deploy live 14:07 UTC" },
        { kind: "deploy-failed", index: 7, slot: 1, count: 1, label: "Deploy failed 14:07 UTC" },
        { kind: "crash", index: 7, slot: 2, count: 1, label: "Crash 14:07 UTC" },
      ],
    ],
    [
      "in time order whatever the input order",
      [{ at: at(40), kind: "deploy-live" }, { at: at(10), kind: "deploy-failed" }, { at: at(20), kind: "crash" }],
      [
        { kind: "deploy-failed", index: 10, slot: 0, count: 1, label: "Deploy failed 14:10 UTC" },
        { kind: "crash", index: 20, slot: 0, count: 1, label: "Crash 14:20 UTC" },
        { kind: "deploy-live", index: 40, slot: 0, count: 1, label: "Deploy live 14:40 UTC" },
      ],
    ],
    ["a count of nothing is no event", [{ at: at(3), kind: "crash", count: 0 }], []],
  ])("%s", (_, events, expected) => {
    expect(chartMarkers(events, HOUR).map(({ kind, index, slot, count, label }) => ({ kind, index, slot, count, label }))).toEqual(expected);
  });

  it("places each marker at its point's x, and dates them on longer steps", () => {
    const [first, last] = chartMarkers([{ at: at(0), kind: "deploy-live" }, { at: at(59), kind: "crash" }], HOUR);
    expect([first!.x, last!.x]).toEqual([0, WIDTH]);
    const day = chartMarkers([{ at: at(150), kind: "rollback" }], { from: FROM, step: 3600, points: 24 });
    expect(day.map((m) => [m.index, m.label])).toEqual([[2, "Rollback live 11-27 16:30 UTC"]]);
    expect([markerTime(at(32), 60), markerTime(at(32), 3600)]).toEqual(["14:32 UTC", "11-27 14:32 UTC"]);
  });

  it("draws a symbol for every kind", () => {
    for (const kind of MARKER_KINDS) expect(markerPath(kind, 10, 20)).toMatch(/^M[-\d. ,A-Z]+$/);
  });

  it.each([
    ["live", "deploy", "deploy-live"],
    ["superseded", "push", "deploy-live"],
    ["live", "rollback", "rollback"],
    ["superseded", "rollback", "rollback"],
    ["failed", "deploy", "deploy-failed"],
    ["failed", "rollback", "deploy-failed"],
    ["building", "deploy", null],
    ["starting", "push", null],
  ] as const)("a %s %s marks %s", (status, kind, marker) => expect(deployMarkerKind(status, kind)).toBe(marker));
});
