/**
 * SQL calls during an export, and an export under a steady writer. One client alternates a read
 * and a write through the console's SQL route, one call every 100 ms, first on the idle database
 * and then from an export's start to its archive being ready: the p99 and the slowest call of
 * each, during against idle. And the export's speed with that writer against the same export with
 * none. Goals: p99 at most 3x idle and no call over 1 s; export speed with the writer at least 0.8
 * of its speed without.
 *
 * Part of `npm run bench`; alone: `npx tsx scripts/bench/writes-phase.ts --sizes 50MB,200MB [--runs N]`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchContext } from "./context";
import { percentile } from "./load";
import { formatSize, parseOptions } from "./options";
import { type ResultRow, renderTable, row } from "./report";
import { type BenchAccount, createAccount, createDatabase, fillDatabase, runSql, startExport, waitUntilReady } from "./worker-client";
import { startWorkerProcess } from "./worker-process";

/** What the phase needs of a dataset: a filled database and its raw size. */
export interface WritesDataset {
  label: string;
  databaseId: string;
  rawBytes: number;
}

/** Spacing between one call's reply and the next call. */
const PACE_MS = 100;
/** How long the idle calls run (3 s with --quick). */
const IDLE_MS = 10_000;

interface Calls {
  reads: number[];
  writes: number[];
  failures: number;
}

/** Alternating reads and writes, one per PACE_MS, until `done` says stop. */
async function callLoop(account: BenchAccount, databaseId: string, done: () => boolean): Promise<Calls> {
  const calls: Calls = { reads: [], writes: [], failures: 0 };
  for (let n = 0; !done(); n++) {
    const id = (n * 7919) % 1000 + 1;
    const write = n % 2 === 1;
    const sql = write ? `UPDATE accounts SET balance = balance + 0.5, display_name = 'written ${n}' WHERE id = ${id}` : `SELECT * FROM accounts WHERE id = ${id}`;
    const started = performance.now();
    try {
      await runSql(account, databaseId, sql);
      (write ? calls.writes : calls.reads).push(performance.now() - started);
    } catch {
      calls.failures++;
    }
    await new Promise((r) => setTimeout(r, PACE_MS));
  }
  return calls;
}

/** Seconds from the start request to the archive being ready, with the call loop running or not. */
async function timedExport(account: BenchAccount, databaseId: string, withCalls: boolean): Promise<{ seconds: number; calls: Calls | null }> {
  const started = await startExport(account, databaseId);
  let ready = false;
  const loop = withCalls ? callLoop(account, databaseId, () => ready) : Promise.resolve(null);
  const done = await waitUntilReady(started);
  ready = true;
  return { seconds: done.totalMs / 1000, calls: await loop };
}

export async function measureWritesDuringExport(ctx: Pick<BenchContext, "options" | "progress" | "note" | "check">, account: BenchAccount, datasets: WritesDataset[]): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  for (const data of datasets) {
    const idle = { readP99: [] as number[], writeP99: [] as number[] };
    const busy = { readP99: [] as number[], writeP99: [] as number[], slowest: [] as number[] };
    const speed = { alone: [] as number[], written: [] as number[] };
    for (let run = 1; run <= ctx.options.runs; run++) {
      ctx.progress(`writes during export ${data.label}, run ${run}: idle calls`);
      const until = performance.now() + (ctx.options.quick ? 3_000 : IDLE_MS);
      const quiet = await callLoop(account, data.databaseId, () => performance.now() > until);
      idle.readP99.push(percentile(quiet.reads, 99));
      idle.writeP99.push(percentile(quiet.writes, 99));
      ctx.progress(`writes during export ${data.label}, run ${run}: export alone`);
      const alone = await timedExport(account, data.databaseId, false);
      ctx.progress(`writes during export ${data.label}, run ${run}: export with calls`);
      const written = await timedExport(account, data.databaseId, true);
      const calls = written.calls!;
      busy.readP99.push(percentile(calls.reads, 99));
      busy.writeP99.push(percentile(calls.writes, 99));
      busy.slowest.push(Math.max(...calls.reads, ...calls.writes));
      speed.alone.push(data.rawBytes / 1e6 / alone.seconds);
      speed.written.push(data.rawBytes / 1e6 / written.seconds);
      ctx.check(`${data.label} run ${run}: every SQL call during the export answered`, calls.failures === 0 && quiet.failures === 0, `${calls.failures + quiet.failures} failed of ${calls.reads.length + calls.writes.length + calls.failures} calls`);
      ctx.note(
        `${data.label} run ${run}: ${calls.reads.length + calls.writes.length} SQL calls during a ${written.seconds.toFixed(1)} s export, slowest ${Math.round(busy.slowest.at(-1)!)} ms (goal: none over 1000 ms); export alone ${alone.seconds.toFixed(1)} s`,
      );
    }
    const subject = (what: string) => `SQL ${what} during a ${data.label} export (1 client, a call per ${PACE_MS} ms)`;
    rows.push(
      row(subject("read"), "p99, ms", busy.readP99, "same calls, idle", idle.readP99, "lower"),
      row(subject("write"), "p99, ms", busy.writeP99, "same calls, idle", idle.writeP99, "lower"),
      row(`Export ${data.label} with a steady writer (a call per ${PACE_MS} ms)`, "throughput, MB/s of raw data", speed.written, "no writer", speed.alone, "higher"),
    );
  }
  return rows;
}

/** Alone: a Worker of its own, databases filled with the bench's recipe, the table printed. */
async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2).filter((a) => a !== "--"));
  if (!options) return;
  const dir = mkdtempSync(join(tmpdir(), "control-plane-bench-writes-"));
  const worker = await startWorkerProcess(join(dir, "state"));
  try {
    const account = await createAccount(worker.server.url, "bench@example.com");
    const datasets: WritesDataset[] = [];
    for (const size of options.sizes) {
      const label = formatSize(size);
      const databaseId = await createDatabase(account, `bench ${label}`);
      const rawBytes = await fillDatabase(account, databaseId, size, (done, total) => console.log(`filling ${label}: ${done}/${total}`));
      datasets.push({ label, databaseId, rawBytes });
    }
    const checks: { name: string; ok: boolean; detail: string }[] = [];
    const notes: string[] = [];
    const ctx = {
      options,
      progress: (line: string) => console.log(line),
      note: (line: string) => (notes.push(line), console.log(line)),
      check: (name: string, ok: boolean, detail: string) => void checks.push({ name, ok, detail }),
    };
    const rows = await measureWritesDuringExport(ctx, account, datasets);
    console.log(`\n${renderTable({ finishedAt: new Date().toISOString(), machine: { cores: 0, cpu: "", memoryGB: 0, node: process.version, tools: {} }, options: { ...options, durationSeconds: 0 }, rows, notes, checks })}`);
  } finally {
    await worker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith("writes-phase.ts")) await main();
