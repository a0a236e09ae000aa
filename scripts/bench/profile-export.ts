/**
 * `npx tsx scripts/bench/profile-export.ts [--size 20MB] [--shape narrow [--quick]]`: one export
 * (of mixed rows of --size, or of a dataset shape of shapes.ts) under a CPU profile of the
 * Worker's isolate (through wrangler's inspector), with a `/healthz` probe every 100 ms beside it.
 * Prints where the isolate spent its time (self time by function), the longest
 * stretch it ran without going idle, and how long the probes waited; writes the `.cpuprofile`
 * (open it in Chrome DevTools) to the temporary directory.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { profileData, profiledDatabase } from "./profiled-database";
import { type Probe, probeHealthz, slowest } from "./responsiveness";
import { startExport, waitUntilReady } from "./worker-client";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}


/** Self time (ms) grouped by `key`, largest first. */
function selfTime(profile: Profile, key: (node: ProfileNode) => string): [string, number][] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const k = key(byId.get(id)!);
    totals.set(k, (totals.get(k) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return [...totals].sort((a, b) => b[1] - a[1]);
}

/** The longest run of consecutive samples that were not `(idle)`, ms. */
function longestBusyStretch(profile: Profile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  let longest = 0;
  let current = 0;
  profile.samples.forEach((id, i) => {
    current = idle.has(id) ? 0 : current + (profile.timeDeltas[i] ?? 0) / 1000;
    longest = Math.max(longest, current);
  });
  return longest;
}

function report(during: string, probes: Probe[]): void {
  const slow = probes.filter(({ ms }) => ms >= 500);
  console.log(`/healthz probes during ${during}: ${probes.length}, slowest ${slowest(probes).toFixed(0)} ms`);
  console.log(`  ${slow.length} took 500 ms or more: ${slow.map(({ at, ms }) => `at ${(at / 1000).toFixed(1)} s: ${ms.toFixed(0)} ms`).join(", ") || "none"}`);
}

/** wrangler bundles the Worker into one file, so a frame is told apart by its function name. */
const functionName = (n: ProfileNode) => n.callFrame.functionName || (n.callFrame.url ? "(anonymous)" : "(native)");

const db = await profiledDatabase("profile", profileData("20MB").data);
try {
  const { server, account, databaseId, raw, devtools, dir } = db;
  await devtools.send("Profiler.enable");
  await devtools.send("Profiler.setSamplingInterval", { interval: 200 });
  await devtools.send("Profiler.start");

  const started = await startExport(account, databaseId);
  const exportProbe = probeHealthz(server.url);
  const ready = await waitUntilReady(started);
  const exportProbes = await exportProbe.stop();
  const { profile } = (await devtools.send<{ profile: Profile }>("Profiler.stop"))!;
  devtools.close();

  const file = join(dir, "export.cpuprofile");
  writeFileSync(file, JSON.stringify(profile));
  const total = profile.timeDeltas.reduce((a, b) => a + b, 0) / 1000;
  const ms = (n: number) => `${n.toFixed(0).padStart(7)} ms ${((100 * n) / total).toFixed(1).padStart(5)}%`;
  console.log(`Export of ${(raw / 1e6).toFixed(1)} MB raw: ${ready.totalMs.toFixed(0)} ms to ready, archive ${(ready.archiveBytes / 1e6).toFixed(1)} MB`);
  console.log(`Profile: ${total.toFixed(0)} ms sampled; longest stretch without going idle: ${longestBusyStretch(profile).toFixed(0)} ms`);
  report("the export", exportProbes);
  console.log("Self time by function:");
  for (const [k, v] of selfTime(profile, functionName).slice(0, 25)) console.log(`  ${ms(v)}  ${k}`);
  console.log(`\nCPU profile: ${file}`);

  const downloadProbe = probeHealthz(server.url);
  const t = performance.now();
  const bytes = (await (await fetch(started.url)).arrayBuffer()).byteLength;
  const downloadMs = performance.now() - t;
  const downloadProbes = await downloadProbe.stop();
  console.log(`\nDownload of the archive: ${(bytes / 1e6).toFixed(1)} MB in ${(downloadMs / 1000).toFixed(1)} s`);
  report("the download", downloadProbes);
} catch (err) {
  console.error(`wrangler's output:\n${db.server.output().slice(-4000)}`);
  throw err;
} finally {
  // The CPU profile stays in the directory.
  await db.close({ keepDir: true });
}
