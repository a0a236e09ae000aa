/**
 * Export and download, per database size: the Worker's export (start request to the first reply
 * serving the archive) against `sqlite3 .dump | gzip -6 | sha256sum` on the same rows, the
 * archive fetched whole with curl from `wrangler dev` against nginx serving the same file from
 * disk, and the peak memory of workerd during both against its idle size.
 */
import { join } from "node:path";
import type { BenchContext } from "./context";
import { describeCpuUse, measureChildrenCpu, measureCpu } from "./cpu-use";
import { type IsolatePeaks, IsolatePeak, splitPeaks } from "./isolate-memory";
import { type RssByRole, RssPeak, runtimeWorkerdPid } from "./memory";
import { buildNativeDatabase, nativeArchiveBytes, nativeExport, restoreAndCompare } from "./native";
import { type ResultRow, row } from "./report";
import { idleHealthzMs, probeHealthz, slowest } from "./responsiveness";
import { formatSize } from "./options";
import type { Recipe } from "./dataset";
import { curlDownload, fileSha256, mbPerSecond } from "./transfer";
import { type BenchAccount, createDatabase, fillDatabase, startExport, waitUntilReady } from "./worker-client";

const MB = 1e6;
/**
 * Datasets up to this raw size are also exported natively on one core (nativeExport's `oneCore`):
 * what the native pipeline does without its second core, for the rows bound by one thread. The
 * 1 GB one is left out: its extra runs would take minutes.
 */
const ONE_CORE_MAX_BYTES = 250e6;

/** A filled database on both sides. */
export interface Dataset {
  label: string;
  databaseId: string;
  nativePath: string;
  rawBytes: number;
}

/** Fills the managed database and the native file with one recipe side by side. */
export async function prepareDataset(ctx: BenchContext, account: BenchAccount, recipe: Recipe, name: string): Promise<Dataset> {
  const { label } = recipe;
  const nativePath = join(ctx.dir, `native-${name}.db`);
  const databaseId = await createDatabase(account, `bench ${label}`);
  const started = performance.now();
  const [workerRaw, nativeRaw] = await Promise.all([
    fillDatabase(account, databaseId, recipe, (done, total) => ctx.progress(`filling ${label}: batch ${done}/${total}`)),
    buildNativeDatabase(nativePath, recipe),
  ]);
  ctx.log(`${label}: filled both sides in ${((performance.now() - started) / 1000).toFixed(0)} s, ${(workerRaw / MB).toFixed(1)} MB raw`);
  ctx.check(`${label} same data`, workerRaw === nativeRaw, `raw size ${workerRaw} bytes in the managed database, ${nativeRaw} in the sqlite3 file`);
  return { label, databaseId, nativePath, rawBytes: workerRaw };
}

/** Peak resident memory per workerd while `work` runs (read from /proc: nothing attaches to the runtime). */
async function withRss<T>(ctx: BenchContext, work: () => Promise<T>): Promise<[T, RssByRole]> {
  const { server } = ctx.worker;
  const peak = new RssPeak(server.process.pid!, server.port);
  try {
    return [await work(), peak.stop()];
  } catch (err) {
    peak.stop();
    throw err;
  }
}

/**
 * Each isolate's peak heap and ArrayBuffers while `work` runs, through an inspector session on
 * every isolate of the runtime, and the runtime's peak RSS beside them. The sessions hold up the
 * whole runtime: during 1 GB exports a `/healthz` waited up to 20.6 s with them (1.9 and 7.1 s in
 * two other runs) and at most 1.8 s without (README, Latest figures), so the speed and
 * responsiveness figures come from runs without them (withRss) and these give memory only.
 */
async function withIsolates<T>(ctx: BenchContext, work: () => Promise<T>): Promise<[T, RssByRole, { peaks: IsolatePeaks; start: IsolatePeaks }]> {
  const { server } = ctx.worker;
  const isolates = await IsolatePeak.start(server, runtimeWorkerdPid(server.process.pid!, server.port));
  try {
    const [result, rss] = await withRss(ctx, work);
    return [result, rss, await isolates.stop()];
  } catch (err) {
    await isolates.stop();
    throw err;
  }
}

/** The Worker's own isolate at its peak: JS heap in use plus ArrayBuffers, bytes. */
function ownPeak(peaks: IsolatePeaks): number {
  const { worker } = splitPeaks(peaks);
  return worker.heapUsed + worker.arrayBuffers;
}

const mb = (bytes: number) => (bytes / MB).toFixed(0);

/** One line saying where a phase's memory went: the Worker's isolate, the other isolates, the rest. */
function memoryNote(what: string, rss: number, idle: number, isolates: { peaks: IsolatePeaks; start: IsolatePeaks }): string {
  const { worker, workerGrowth, othersGrowth } = splitPeaks(isolates.peaks, isolates.start);
  const rest = rss - idle - workerGrowth - othersGrowth;
  return (
    `${what}: workerd runtime RSS peak ${mb(rss)} MB, ${mb(rss - idle)} MB over its idle ${mb(idle)} MB. ` +
    `The Worker's isolate peaked at JS heap ${mb(worker.heapUsed)} MB + ArrayBuffers ${mb(worker.arrayBuffers)} MB = ${mb(worker.heapUsed + worker.arrayBuffers)} MB (${mb(workerGrowth)} MB over its start); ` +
    `the local D1/R2/queue emulation isolates grew ${mb(othersGrowth)} MB at their peaks; ` +
    `the other ${mb(rest)} MB of the growth is outside any isolate's heap (SQLite and blob files of the local storage, the allocator's free lists, runtime buffers).`
  );
}

/**
 * A fresh runtime for the next measurement, so its memory peak owes nothing to earlier work (and
 * its idle size is the baseline); `--quick` keeps the one it has: a restart is 10 s or more on a
 * busy 2-core machine, and a quick run's figures are not the goals'.
 */
export async function freshRuntime(ctx: BenchContext, label: string): Promise<void> {
  if (ctx.options.quick) return;
  ctx.progress(`${label}: restarting wrangler dev`);
  await ctx.worker.restart();
}

/** One export, start request to the archive ready, with a `/healthz` probe beside it. */
async function timedExport(ctx: BenchContext, account: BenchAccount, data: Dataset) {
  const probe = probeHealthz(ctx.worker.server.url);
  const started = await startExport(account, data.databaseId);
  const ready = await waitUntilReady(started);
  return { url: started.url, startMs: started.startMs, slowestHealthz: slowest(await probe.stop()), ...ready };
}

/**
 * Measures export and download of one dataset, each on a freshly restarted Worker, so the memory
 * peaks owe nothing to earlier sizes (the runs of one kind share one runtime: a peak that climbs
 * from run to run would show memory kept between exports); returns the table rows. The isolate
 * figures come from runs of their own, before the timed ones (withIsolates says why).
 */
export async function measureExportAndDownload(ctx: BenchContext, account: BenchAccount, data: Dataset): Promise<ResultRow[]> {
  const { label } = data;
  const runs = ctx.options.runs;
  let last: { url: string; archiveBytes: number; sha256: string } | undefined;
  const sameArchive = (what: string, ready: { sha256: string }) => {
    if (last) ctx.check(`${label} ${what} archive`, last.sha256 === ready.sha256, `same SHA-256 as the run before: ${ready.sha256.slice(0, 16)}...`);
  };

  await freshRuntime(ctx, label);
  const exportIsolate: number[] = [];
  for (let run = 1; run <= runs; run++) {
    ctx.progress(`${label}: export run ${run}/${runs}, isolate memory`);
    const [ready, peak, isolates] = await withIsolates(ctx, () => timedExport(ctx, account, data));
    exportIsolate.push(ownPeak(isolates.peaks));
    if (run === 1) ctx.note(memoryNote(`${label} export`, peak.runtime, ctx.worker.idleRss.runtime, isolates));
    sameArchive(`export memory run ${run}`, ready);
    last = ready;
  }

  await freshRuntime(ctx, label);
  const idle = ctx.worker.idleRss;
  const worker: number[] = [];
  const native: number[] = [];
  const nativeOneCore: number[] = [];
  const exportPeak: number[] = [];
  const idleHealthz: number[] = [];
  const startReply: number[] = [];
  const slowestHealthz: number[] = [];
  for (let run = 1; run <= runs; run++) {
    ctx.progress(`${label}: export run ${run}/${runs}, timed`);
    idleHealthz.push(await idleHealthzMs(ctx.worker.server.url));
    const cpu = measureCpu(runtimeWorkerdPid(ctx.worker.server.process.pid!, ctx.worker.server.port));
    const [ready, peak] = await withRss(ctx, () => timedExport(ctx, account, data));
    ctx.note(describeCpuUse(`${label} export run ${run}, timed`, cpu()));
    startReply.push(ready.startMs);
    slowestHealthz.push(ready.slowestHealthz);
    worker.push(data.rawBytes / MB / (ready.totalMs / 1000));
    exportPeak.push(peak.runtime);
    sameArchive(`export run ${run}`, ready);
    last = ready;
    const nativeCpu = measureChildrenCpu();
    const nat = await nativeExport(data.nativePath);
    ctx.note(describeCpuUse(`${label} native run ${run}`, nativeCpu(), "pipeline"));
    native.push(data.rawBytes / MB / nat.seconds);
    if (data.rawBytes <= ONE_CORE_MAX_BYTES) {
      const one = await nativeExport(data.nativePath, { oneCore: true });
      ctx.check(`${label} native run ${run} on one core`, one.sha256 === nat.sha256, "the same archive as on two cores");
      nativeOneCore.push(data.rawBytes / MB / one.seconds);
    }
  }
  if (!last) throw new Error("no export run");

  const archive = join(ctx.archives, `${data.databaseId}.sql.gz`);
  const saved = await curlDownload(last.url, archive);
  const sha256 = await fileSha256(archive);
  ctx.check(`${label} download`, saved.sha256 === sha256 && saved.bytes === last.archiveBytes, `${saved.bytes} bytes, SHA-256 ${sha256 === saved.sha256 ? "equals" : "differs from"} X-Export-SHA256`);
  const nativeGz = await nativeArchiveBytes(data.nativePath);
  ctx.progress(`${label}: restoring the archive with sqlite3`);
  const trip = await restoreAndCompare(archive, data.nativePath, join(ctx.dir, "restored.db"));
  ctx.check(`${label} round trip`, trip.same, trip.same ? "the archive restores with sqlite3 to the same schema and rows as the native file" : `the restored database differs from the native file: ${trip.differences.join(", ") || "in its schema"}`);
  ctx.check(
    `${label} archive contents`,
    trip.extraObjects.length === 0,
    trip.extraObjects.length === 0 ? "only the database's own tables and indexes" : `also holds objects the database's owner never made: ${trip.extraObjects.join(", ")}`,
  );

  // A fresh runtime again, so the download's peak does not include what the exports left behind;
  // the isolate figures first, then the timed downloads, as for the export.
  await freshRuntime(ctx, label);
  const downloadIsolate: number[] = [];
  for (let run = 1; run <= runs; run++) {
    ctx.progress(`${label}: download run ${run}/${runs}, isolate memory`);
    const [, peak, isolates] = await withIsolates(ctx, () => curlDownload(last.url));
    downloadIsolate.push(ownPeak(isolates.peaks));
    if (run === 1) ctx.note(memoryNote(`${label} download`, peak.runtime, ctx.worker.idleRss.runtime, isolates));
  }
  await freshRuntime(ctx, label);
  const downloadIdle = ctx.worker.idleRss;
  const download: number[] = [];
  const nginx: number[] = [];
  const downloadPeak: number[] = [];
  const proxyPeak: number[] = [];
  for (let run = 1; run <= runs; run++) {
    ctx.progress(`${label}: download run ${run}/${runs}, timed`);
    const [got, peak] = await withRss(ctx, () => curlDownload(last.url));
    download.push(mbPerSecond(got.bytes, got.seconds));
    downloadPeak.push(peak.runtime);
    proxyPeak.push(peak.proxy);
    const ref = await curlDownload(`${ctx.nginx.url}/${data.databaseId}.sql.gz`);
    nginx.push(mbPerSecond(ref.bytes, ref.seconds));
  }

  const archiveLabel = `${formatSize(last.archiveBytes)} archive`;
  return [
    row(`Export ${label}`, "throughput, MB/s of raw data", worker, "sqlite3 .dump | gzip -6 | sha256sum", native, "higher"),
    ...(nativeOneCore.length > 0
      ? [row(`Export ${label}`, "throughput, MB/s of raw data, against one core (not a goal row)", worker, "one core: the same pipeline under taskset -c 0", nativeOneCore, "higher")]
      : []),
    row(`Export ${label}`, "archive size, MB", [last.archiveBytes / MB], "gzip -6 of sqlite3 .dump", [nativeGz / MB], "lower"),
    row(`Export ${label}`, "start request's reply, ms", startReply, "/healthz, idle, one client", idleHealthz, "lower"),
    row(`Export ${label}`, "slowest /healthz sent during the export, ms", slowestHealthz, "/healthz, idle, one client", idleHealthz, "lower"),
    row(`Download ${label} (${archiveLabel})`, "curl, MB/s", download, "nginx, same file from disk", nginx, "higher"),
    row(`Memory ${label}`, "workerd runtime peak RSS during export, MB", exportPeak.map((b) => b / MB), "idle RSS of a fresh runtime", [idle.runtime / MB], "lower"),
    row(`Memory ${label}`, "workerd runtime peak RSS during download, MB", downloadPeak.map((b) => b / MB), "idle RSS of a fresh runtime", [downloadIdle.runtime / MB], "lower"),
    row(`Memory ${label}`, "workerd proxy peak RSS during download, MB", proxyPeak.map((b) => b / MB), "idle RSS of a fresh proxy", [downloadIdle.proxy / MB], "lower"),
    row(`Isolate ${label}`, "Worker isolate peak during export, JS heap + ArrayBuffers, MB", exportIsolate.map((b) => b / MB), "goal: 64 MB (Cloudflare's limit is 128 MB)", [64], "lower"),
    row(`Isolate ${label}`, "Worker isolate peak during download, JS heap + ArrayBuffers, MB", downloadIsolate.map((b) => b / MB), "goal: 64 MB (Cloudflare's limit is 128 MB)", [64], "lower"),
  ];
}
