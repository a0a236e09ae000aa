/**
 * `npm run bench`: export throughput, download throughput, start/poll latency and workerd memory
 * of the Worker under a real `wrangler dev`, each against a native baseline measured in the same
 * run (sqlite3 | gzip | sha256sum, nginx, the Worker's own /healthz, idle memory). Prints a table
 * and writes the same figures to bench/results.json. `--apps` instead measures apps on dockerd
 * (scripts/bench/apps.ts). Flags: `npm run bench -- --help`.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ROOT } from "./lib/dev-server";
import { runAppsBench } from "./bench/apps";
import { runRebuildBench } from "./bench/rebuild";
import type { BenchContext } from "./bench/context";
import { type Dataset, freshRuntime, measureExportAndDownload, prepareDataset } from "./bench/export-phase";
import { measureLatency } from "./bench/latency-phase";
import { measureWritesDuringExport } from "./bench/writes-phase";
import { describeMachine } from "./bench/machine";
import { judgeGoals } from "./bench/goals";
import { setLocalTraces } from "./bench/local-traces";
import { missingTools } from "./bench/native";
import { measureRequests } from "./bench/request-phase";
import { startNginx } from "./bench/nginx";
import { type BenchOptions, USAGE, formatSize, parseOptions } from "./bench/options";
import { mixedRecipe } from "./bench/dataset";
import { recipeOf } from "./bench/shapes";
import { type BenchReport, type ResultRow, renderTable, writeReport } from "./bench/report";
import { createAccount } from "./bench/worker-client";
import { startWorkerProcess } from "./bench/worker-process";

/** Table order: by what is measured, then in the order measured. */
const ORDER = ["/healthz", "App", "Poll of a signed", "Start export of", "Export", "Download", "Start", "Poll", "Memory", "Isolate"];

function readOptions(): BenchOptions {
  try {
    const options = parseOptions(process.argv.slice(2));
    if (options) return options;
    console.log(USAGE);
    process.exit(0);
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}

function output(): Pick<BenchContext, "log" | "progress"> {
  const tty = process.stdout.isTTY;
  let lastShown = 0;
  const clear = () => tty && process.stdout.write("\r\x1b[K");
  return {
    log: (line) => {
      clear();
      console.log(line);
    },
    // On a terminal the status line is rewritten in place; in a log, one line every 10 s at most.
    progress: (line) => {
      if (tty) process.stdout.write(`\r\x1b[K${line.slice(0, (process.stdout.columns ?? 80) - 1)}`);
      else if (Date.now() - lastShown >= 10_000) {
        lastShown = Date.now();
        console.log(`  ${line}`);
      }
    },
  };
}

async function main(): Promise<void> {
  const options = readOptions();
  setLocalTraces(options.localTraces);
  if (options.rebuild) {
    // --rebuild measures redeploys of a one-file change with the cache warm, against the Docker CLI.
    await runRebuildBench(options, output());
    return;
  }
  if (options.apps) {
    // --apps measures apps only: deploys on dockerd and the proxy, not exports.
    await runAppsBench(options, output());
    return;
  }
  if (options.floorOnly) {
    await runFloorBench(options);
    return;
  }
  const missing = await missingTools();
  if (missing) {
    console.error(missing);
    process.exit(1);
  }
  const began = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "control-plane-bench-"));
  const archives = join(dir, "archives");
  mkdirSync(archives);
  const { log, progress } = output();
  const checks: BenchReport["checks"] = [];
  const notes: string[] = [];
  log(`Bench directory: ${dir}${options.keep ? " (kept)" : ""}`);

  const nginx = await startNginx(join(dir, "nginx"), archives);
  progress("starting wrangler dev");
  const worker = await startWorkerProcess(join(dir, "state")).catch(async (err: Error) => {
    await nginx.stop();
    throw err;
  });
  const cleanup = async () => {
    await Promise.allSettled([worker.stop(), nginx.stop()]);
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  };
  process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));

  const ctx: BenchContext = {
    options, dir, archives, worker, nginx, log, progress,
    ...recorders(log, notes, checks),
  };
  const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(0)} s`;
  try {
    const rows: ResultRow[] = [];
    if (!options.noRequests) {
      const measuring = performance.now();
      rows.push(...(await measureRequests(options, dir, ctx)));
      log(`requests measured against the floor in ${seconds(measuring)}`);
    }
    const account = await createAccount(worker.server.url, "bench@example.com");
    const datasets: Dataset[] = [];
    if (options.shapes.includes("mixed")) {
      for (const size of options.sizes) datasets.push(await prepareDataset(ctx, account, mixedRecipe(size, formatSize(size)), `mixed-${size}`));
    }
    for (const shape of options.shapes) if (shape !== "mixed") datasets.push(await prepareDataset(ctx, account, recipeOf(shape, options.quick), shape));
    for (const data of datasets) {
      const measuring = performance.now();
      rows.push(...(await measureExportAndDownload(ctx, account, data)));
      log(`${data.label}: export and download measured in ${seconds(measuring)}`);
    }
    // Polls need an export that lasts a while but not minutes: the largest dataset up to 250 MB.
    const mixed = datasets.slice(0, options.shapes.includes("mixed") ? options.sizes.length : 0);
    const pollData = [...mixed].reverse().find((d) => d.rawBytes <= 250e6) ?? datasets[0]!;
    const measuring = performance.now();
    await freshRuntime(ctx, "latency");
    rows.push(...(await measureLatency(ctx, account, pollData)));
    log(`latency measured in ${seconds(measuring)}`);
    // The writer updates the mixed dataset's accounts table: the other shapes have none.
    if (mixed.length > 0) rows.push(...(await measureWritesDuringExport(ctx, account, mixed)));

    rows.sort((a, b) => ORDER.findIndex((k) => a.subject.startsWith(k)) - ORDER.findIndex((k) => b.subject.startsWith(k)));
    await finishReport(options, began, { rows, notes, checks }, log);
  } finally {
    await cleanup();
  }
}

/** A run's note and check recorders: each is kept for the report and said in the log. */
function recorders(log: (line: string) => void, notes: string[], checks: BenchReport["checks"]): Pick<BenchContext, "note" | "check"> {
  return {
    note: (line) => {
      notes.push(line);
      log(line);
    },
    check: (name, ok, detail) => {
      checks.push({ name, ok, detail });
      if (!ok) log(`check failed: ${name}: ${detail}`);
    },
  };
}

/** Writes the run's report (JSON and the table) and fails the process when a check failed. */
async function finishReport(
  options: BenchOptions,
  began: number,
  found: Pick<BenchReport, "rows" | "notes" | "checks">,
  log: (line: string) => void,
): Promise<void> {
  const report: BenchReport = {
    finishedAt: new Date().toISOString(),
    machine: await describeMachine(),
    options: { ...options, durationSeconds: Math.round((Date.now() - began) / 1000) },
    ...found,
    goals: judgeGoals(found.rows),
  };
  const out = resolve(ROOT, options.out);
  writeReport(out, report);
  log(`\n${renderTable(report)}\n\nWritten to ${out} in ${Math.round((Date.now() - began) / 1000)} s.`);
  if (found.checks.some((c) => !c.ok)) process.exitCode = 1;
}

/** `--floor`: only the request rows against the trivial Worker, in a few minutes. */
async function runFloorBench(options: BenchOptions): Promise<void> {
  const began = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "control-plane-bench-floor-"));
  const { log, progress } = output();
  const checks: BenchReport["checks"] = [];
  const notes: string[] = [];
  try {
    const rows = await measureRequests(options, dir, {
      log,
      progress,
      ...recorders(log, notes, checks),
    });
    await finishReport(options, began, { rows, notes, checks }, log);
  } finally {
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
