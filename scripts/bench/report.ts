/**
 * The bench's results: each figure summarised over its runs (median, min, max) next to its native
 * baseline from the same run, printed as a table and written as JSON.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type GoalLine, renderGoals } from "./goals";

/** One figure over several runs. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

/** Median, min and max of the runs (the median of an even count is the mean of the middle two). */
export function summarize(runs: number[]): Summary {
  if (runs.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs };
  const sorted = [...runs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]!, runs };
}

/** A line of the table: the Worker's figure against its baseline. */
export interface ResultRow {
  /** e.g. `Export 200 MB`. */
  subject: string;
  /** e.g. `throughput, MB/s of raw data`. */
  metric: string;
  worker: Summary;
  /** What the baseline is, e.g. `sqlite3 .dump | gzip -6 | sha256sum`. */
  baselineName: string;
  baseline: Summary;
  /** worker median / baseline median. */
  ratio: number;
  /** Whether a bigger figure is the better one (throughput) or a smaller one (latency, memory). */
  better: "higher" | "lower";
  /**
   * The same measure on the floor Worker (a trivial Hono Worker under the same wrangler dev,
   * scripts/bench/floor-worker), on request rows: what the local runtime alone costs.
   */
  floor?: Summary;
  /** What the floor measured, e.g. `trivial Worker /healthz`. */
  floorName?: string;
  /** worker median / floor median. */
  floorRatio?: number;
}

/** Makes a row, computing the ratio of the medians. */
export function row(subject: string, metric: string, worker: number[], baselineName: string, baseline: number[], better: ResultRow["better"]): ResultRow {
  const w = summarize(worker);
  const b = summarize(baseline);
  return { subject, metric, worker: w, baselineName, baseline: b, ratio: w.median / b.median, better };
}

/** The row with its floor: the same measure on the trivial Worker, from the same run. */
export function withFloor(r: ResultRow, floorName: string, floor: number[]): ResultRow {
  const f = summarize(floor);
  return { ...r, floor: f, floorName, floorRatio: r.worker.median / f.median };
}

/** The machine and tools a run measured on. */
export interface Machine {
  cores: number;
  cpu: string;
  memoryGB: number;
  node: string;
  tools: Record<string, string>;
}

/** Everything one bench run found, as written to the JSON file. */
export interface BenchReport {
  finishedAt: string;
  machine: Machine;
  options: Record<string, unknown>;
  rows: ResultRow[];
  /** Observations made on the way that the figures alone do not show. */
  notes: string[];
  /** Correctness checks done on the way (archive hashes, round trip to the same rows). */
  checks: { name: string; ok: boolean; detail: string }[];
  /** Each performance goal, met or not, from this run's rows (goals.ts). */
  goals?: GoalLine[];
}

function figure(n: number): string {
  if (!Number.isFinite(n)) return "-";
  const abs = Math.abs(n);
  return abs >= 100 ? n.toFixed(0) : abs >= 10 ? n.toFixed(1) : abs >= 1 ? n.toFixed(2) : n.toFixed(3);
}

function cell(s: Summary): string {
  return s.runs.length > 1 ? `${figure(s.median)} [${figure(s.min)}-${figure(s.max)}]` : figure(s.median);
}

/** The table as text: one line per row, median [min-max] of each side and the ratio. */
export function renderTable(report: BenchReport): string {
  const { machine } = report;
  const head = [
    `Machine: ${machine.cores} cores (${machine.cpu}), ${machine.memoryGB} GB RAM, Node ${machine.node}`,
    `Tools: ${Object.entries(machine.tools).map(([k, v]) => `${k} ${v}`).join(", ")}`,
    "Each cell: median [min-max] over the runs. Ratio = Worker median / baseline median.",
    "Floor: the same measure on a trivial Hono Worker under the same wrangler dev; vs floor = Worker median / floor median.",
    `wrangler's local trace recording: ${report.options.localTraces ? "on, both sides (--local-traces)" : "off, both sides (--local-traces keeps it on)"}.`,
    "",
  ];
  const lines = [["Measure", "Worker", "Baseline", "", "Ratio", "Floor", "vs floor", ""]];
  for (const r of report.rows) {
    const arrow = r.better === "higher" ? "(higher is better)" : "(lower is better)";
    const floor = r.floor ? [cell(r.floor), figure(r.floorRatio!), r.floorName ?? ""] : ["", "", ""];
    // A row whose baseline is the floor itself shows it once, under Floor.
    const base = r.floor && r.floorName === r.baselineName ? ["", "", ""] : [cell(r.baseline), r.baselineName, `${figure(r.ratio)} ${arrow}`];
    if (r.floor && r.floorName === r.baselineName) floor[1] = `${figure(r.floorRatio!)} ${arrow}`;
    lines.push([`${r.subject}: ${r.metric}`, cell(r.worker), ...base, ...floor]);
  }
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  const text = lines.map((l) => l.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  text.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
  const checks = report.checks.map((c) => `${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}`);
  const goals = report.goals ? ["", ...renderGoals(report.goals)] : [];
  return [...head, ...text, ...goals, "", ...report.notes, "", ...checks].join("\n");
}

/** Writes the report as JSON, creating the directory. */
export function writeReport(path: string, report: BenchReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}

/** A run's notes and checks, each also logged (a failed check at once). */
export function recorders(log: (line: string) => void): {
  notes: string[];
  checks: BenchReport["checks"];
  note: (line: string) => void;
  check: (name: string, ok: boolean, detail: string) => void;
} {
  const notes: string[] = [];
  const checks: BenchReport["checks"] = [];
  const note = (line: string) => {
    notes.push(line);
    log(line);
  };
  const check = (name: string, ok: boolean, detail: string) => {
    checks.push({ name, ok, detail });
    if (!ok) log(`check failed: ${name}: ${detail}`);
  };
  return { notes, checks, note, check };
}
