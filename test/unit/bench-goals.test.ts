import { describe, expect, it } from "vitest";
import { COOKIE_COST_SUBJECT, METRICS_COST_SUBJECT, judgeGoals } from "../../scripts/bench/goals";
import type { ResultRow, Summary } from "../../scripts/bench/report";

/** The goals of the performance work, judged from a run's rows: met, not met, or not measured. */

const s = (median: number, max = median): Summary => ({ median, min: median, max, runs: [median] });

function requestRow(subject: string, floorRatio: number): ResultRow {
  return { subject, metric: "requests/s (wrk, 20 connections)", worker: s(floorRatio * 100), baselineName: "floor", baseline: s(100), ratio: floorRatio, better: "higher", floor: s(100), floorName: "floor", floorRatio };
}
const row = (subject: string, metric: string, ratio: number, baselineName = "sqlite3 .dump | gzip -6 | sha256sum", worker = s(ratio)): ResultRow => ({ subject, metric, worker, baselineName, baseline: s(1), ratio, better: "higher" });

const verdicts = (rows: ResultRow[]) => Object.fromEntries(judgeGoals(rows).map((g) => [g.goal.split(" ")[0] === "/healthz" ? "healthz" : g.goal.split(" ")[0], g.verdict]));

describe("bench goals", () => {
  it.each([
    ["nothing measured", [], { healthz: "not measured", App: "not measured", Poll: "not measured", Metrics: "not measured", Start: "not measured", Export: "not measured", Worker: "not measured" }],
    ["requests at 0.9 of the floor and over", [requestRow("/healthz", 0.9), requestRow("App through the proxy (busybox httpd)", 0.95)], { healthz: "met", App: "met" }],
    ["one poll below 0.9 fails the poll goal", [requestRow("Poll of a signed link, export pending (503)", 0.95), requestRow("Poll of a signed link, ready (200, small archive)", 0.89)], { Poll: "not met" }],
    ["start at 2x /healthz is met, over it not", [row("Start export of an empty database (50 clients)", "p50, ms", 2, "our /healthz, same clients")], { Start: "met" }],
    ["start over 2x", [row("Start export of an empty database (50 clients)", "p50, ms", 2.1, "our /healthz, same clients")], { Start: "not met" }],
    ["every shape at 0.9 or more", ["Export narrow rows, 2,000,000", "Export wide text", "Export blobs", "Export 50 MB"].map((subject) => row(subject, "throughput, MB/s of raw data", 0.9)), { Export: "met" }],
    ["shapes missing, none below", [row("Export 50 MB", "throughput, MB/s of raw data", 1.1)], { Export: "not measured" }],
    ["the rows with a steady writer are not against native", [row("Export 50 MB", "throughput, MB/s of raw data", 0.85), row("Export 50 MB with a steady writer (a call per 100 ms)", "throughput, MB/s of raw data", 1.5, "no writer")], { Export: "not met" }],
    ["one shape below", [row("Export narrow rows, 2,000,000", "throughput, MB/s of raw data", 0.73), row("Export 50 MB", "archive size, MB", 0.5)], { Export: "not met" }],
    ["isolate judged on its highest run", [row("Isolate 50 MB", "Worker isolate peak during export, JS heap + ArrayBuffers, MB", 1, "goal", { median: 60, min: 50, max: 70, runs: [50, 60, 70] })], { Worker: "not met" }],
    ["isolate within 64 MB at every size", ["Isolate 50 MB", "Isolate 200 MB", "Isolate 1 GB"].map((subject) => row(subject, "Worker isolate peak during download, JS heap + ArrayBuffers, MB", 1, "goal", s(64))), { Worker: "met" }],
    ["metrics on at 0.95 of off, measured in turns", [row(METRICS_COST_SUBJECT, "requests/s (wrk, 20 connections, 6 turns each)", 0.95, "collection off")], { Metrics: "met" }],
    ["metrics on below 0.95 of off", [row(METRICS_COST_SUBJECT, "requests/s (wrk, 20 connections, 6 turns each)", 0.93, "collection off")], { Metrics: "not met" }],
    ["the p50 row of the pass is not the goal's", [row(METRICS_COST_SUBJECT, "p50, ms (wrk, 20 connections, 6 turns each)", 0.5, "collection off")], { Metrics: "not measured" }],
    ["cookie rule at 0.95 of the same reply without the cookie", [row(COOKIE_COST_SUBJECT, "requests/s (wrk, 20 connections, 6 turns each)", 0.95, "the same CGI without the cookie")], { Cookie: "met" }],
    ["cookie rule below 0.95", [row(COOKIE_COST_SUBJECT, "requests/s (wrk, 20 connections, 6 turns each)", 0.94, "the same CGI without the cookie")], { Cookie: "not met" }],
    ["cookie rule not measured by the cookie row against the floor alone", [requestRow("App through the proxy, a reply setting a cookie for every app (CGI)", 1.0)], { Cookie: "not measured" }],
    ["metrics off not measured", [requestRow("App through the proxy (busybox httpd)", 0.95)], { Metrics: "not measured" }],
    ["isolate within 64 MB at small sizes only", [row("Isolate 16 MB", "Worker isolate peak during export, JS heap + ArrayBuffers, MB", 1, "goal", s(40))], { Worker: "not measured" }],
  ] as [string, ResultRow[], Record<string, string>][])("%s", (_name, rows, expected) => {
    expect(verdicts(rows)).toMatchObject(expected);
  });
});
