import { describe, expect, it } from "vitest";
import { BASE, bucketOf, bucketUpperMs, quantileMs } from "../../src/metrics/latency-histogram";
import { fillPoints, parseMetricsQuery, parseTime, statusClass } from "../../src/metrics/series";
import { readDockerStats } from "../../src/runtime/stats";

// docs/metrics.md: the metrics route's parameters, its points, the status classes and the
// response-time histogram.

const NOW = 1_800_000_000; // a whole hour, Unix seconds

describe("status classes", () => {
  it.each([
    [101, "2xx"], [200, "2xx"], [204, "2xx"], [301, "3xx"], [304, "3xx"], [404, "4xx"], [429, "4xx"], [500, "5xx"], [502, "5xx"], [504, "5xx"], [599, "5xx"],
  ] as const)("%i counts as %s", (status, cls) => expect(statusClass(status)).toBe(cls));
});

describe("time parameters", () => {
  it.each([
    ["1800000000", 1_800_000_000],
    ["2027-01-15T10:00:00Z", Date.UTC(2027, 0, 15, 10) / 1000],
    ["2027-01-15T10:00:00.500Z", Date.UTC(2027, 0, 15, 10) / 1000],
    ["2027-01-15T12:00:00+02:00", Date.UTC(2027, 0, 15, 10) / 1000],
    ["2027-01-15", Date.UTC(2027, 0, 15) / 1000],
    ["yesterday", null],
    ["-5", null],
    ["1e9", null],
    ["2027-13-45T99:00:00Z", null],
  ] as const)("%s -> %s", (text, seconds) => expect(parseTime(text)).toBe(seconds));
});

describe("the query", () => {
  it.each([
    [{}, { ok: true, query: { from: NOW - 3600, to: NOW, step: 60 } }],
    [{ step: "3600" }, { ok: true, query: { from: NOW - 86400, to: NOW, step: 3600 } }],
    [{ from: String(NOW - 600 + 30), to: String(NOW - 30) }, { ok: true, query: { from: NOW - 600, to: NOW, step: 60 } }],
    [{ step: "30" }, { ok: false, field: "step" }],
    [{ step: "abc" }, { ok: false, field: "step" }],
    [{ from: "soon" }, { ok: false, field: "from" }],
    [{ to: "later" }, { ok: false, field: "to" }],
    [{ from: String(NOW), to: String(NOW - 60) }, { ok: false, field: "from" }],
    // 1,440 minutes fit; 1,441 do not.
    [{ from: String(NOW - 1440 * 60), to: String(NOW) }, { ok: true, query: { from: NOW - 1440 * 60, to: NOW, step: 60 } }],
    [{ from: String(NOW - 1441 * 60), to: String(NOW) }, { ok: false, field: "from" }],
  ] as const)("%j", (params, expected) => expect(parseMetricsQuery(params, NOW)).toMatchObject(expected));
});

describe("points", () => {
  it("has one point per step, oldest first, zeros where nothing happened, merged rows of one step", () => {
    const row = (at: number, r2: number, r5: number) => ({ at, requests: { "2xx": r2, "3xx": 0, "4xx": 0, "5xx": r5 }, latency: { [bucketOf(20)]: r2 + r5 }, bytesOut: 10 * r2, cpuPercentSum: 50, cpuSamples: 2, memoryBytesMax: 1000 * r2, restarts: 0 });
    const points = fillPoints({ from: NOW - 180, to: NOW, step: 60 }, [row(NOW - 120, 3, 1), row(NOW - 120, 2, 0)]);
    expect(points.map((p) => p.at)).toEqual([NOW - 180, NOW - 120, NOW - 60].map((s) => new Date(s * 1000).toISOString()));
    expect(points[0]).toEqual({ at: points[0]!.at, requests: { "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0 }, latency_ms: null, bytes_out: 0, cpu_percent: null, memory_bytes: null, restarts: 0 });
    expect(points[1]).toMatchObject({ requests: { "2xx": 5, "5xx": 1 }, bytes_out: 50, cpu_percent: 25, memory_bytes: 3000, latency_ms: { p50: bucketUpperMs(bucketOf(20)), p95: bucketUpperMs(bucketOf(20)) } });
  });
});

describe("response-time histogram", () => {
  it.each([0, 0.5, 1, 1.05, 2, 17, 250, 999, 5_000, 119_000])("a time of %f ms reads back at most 10 %% above it", (ms) => {
    const upper = bucketUpperMs(bucketOf(ms));
    expect(upper).toBeGreaterThanOrEqual(Math.floor(ms));
    expect(upper).toBeLessThanOrEqual(Math.max(1, Math.ceil(ms * BASE)));
  });

  it("reads p50 and p95 by rank", () => {
    const h: Record<number, number> = {};
    for (let i = 1; i <= 100; i++) h[bucketOf(i)] = (h[bucketOf(i)] ?? 0) + 1;
    const p50 = quantileMs(h, 0.5)!;
    const p95 = quantileMs(h, 0.95)!;
    expect(p50).toBeGreaterThanOrEqual(50);
    expect(p50).toBeLessThanOrEqual(55);
    expect(p95).toBeGreaterThanOrEqual(95);
    expect(p95).toBeLessThanOrEqual(105);
    expect(quantileMs({}, 0.5)).toBeNull();
  });
});

describe("engine stats", () => {
  it.each([
    [
      "cgroup v2, half a CPU of two",
      { cpu_stats: { cpu_usage: { total_usage: 1_500_000_000 }, system_cpu_usage: 20_000_000_000, online_cpus: 2 }, precpu_stats: { cpu_usage: { total_usage: 1_000_000_000 }, system_cpu_usage: 18_000_000_000 }, memory_stats: { usage: 50_000_000, stats: { inactive_file: 10_000_000 } } },
      { cpuPercentOfOneCpu: 50, memoryBytes: 40_000_000, restartCount: 2 },
    ],
    [
      "cgroup v1 cache, no earlier reading",
      { cpu_stats: { cpu_usage: { total_usage: 5, percpu_usage: [1, 2, 3, 4] }, system_cpu_usage: 100 }, precpu_stats: {}, memory_stats: { usage: 8_000, stats: { total_inactive_file: 3_000 } } },
      { cpuPercentOfOneCpu: null, memoryBytes: 5_000, restartCount: 2 },
    ],
    ["a stopped container", {}, { cpuPercentOfOneCpu: null, memoryBytes: null, restartCount: 2 }],
  ] as const)("%s", (_name, json, expected) => expect(readDockerStats(json, 2)).toEqual(expected));
});
