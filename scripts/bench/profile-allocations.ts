/**
 * `npx tsx scripts/bench/profile-allocations.ts [--size 200MB] [--shape mixed] [--old-only]`: what the Worker's
 * isolate allocates on its JS heap during one export, by function. Runs V8's sampling heap
 * profiler (`HeapProfiler.startSampling` with `includeObjectsCollectedByMajorGC` and
 * `includeObjectsCollectedByMinorGC`, so garbage counts too) through wrangler's inspector over the
 * export, and prints the functions that allocated most (self size, sampled) with their callers.
 * The heap garbage is what the bench's isolate figure holds above the live set.
 */
import { profileData, profiledDatabase } from "./profiled-database";
import { startExport, waitUntilReady } from "./worker-client";

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Self size by function, each with the callers (up to three frames) that allocated most through it. */
function bySite(root: SamplingNode): Map<string, { bytes: number; callers: Map<string, number> }> {
  const sites = new Map<string, { bytes: number; callers: Map<string, number> }>();
  const walk = (node: SamplingNode, stack: string[]) => {
    const name = node.callFrame.functionName || "(anonymous)";
    if (node.selfSize > 0) {
      const site = sites.get(name) ?? { bytes: 0, callers: new Map<string, number>() };
      site.bytes += node.selfSize;
      const caller = stack.slice(-3).reverse().join(" < ") || "(root)";
      site.callers.set(caller, (site.callers.get(caller) ?? 0) + node.selfSize);
      sites.set(name, site);
    }
    for (const child of node.children) walk(child, [...stack, name]);
  };
  walk(root, []);
  return sites;
}

// --old-only leaves out what minor collections freed: what outlived the young generation, the
// garbage that piles up in the old generation until a major collection (or is still live).
const { shape, data, flags } = profileData("200MB", ["old-only"]);
const oldOnly = flags.has("old-only");
const db = await profiledDatabase("allocations", data);
const MB = 1e6;
try {
  const { account, databaseId, raw, devtools } = db;
  await devtools.send("HeapProfiler.enable");
  await devtools.send("HeapProfiler.startSampling", { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !oldOnly });
  const ready = await waitUntilReady(await startExport(account, databaseId));
  const { profile } = (await devtools.send<{ profile: { head: SamplingNode } }>("HeapProfiler.stopSampling", {}, 60_000))!;
  devtools.close();
  const sites = [...bySite(profile.head)].sort((a, b) => b[1].bytes - a[1].bytes);
  const total = sites.reduce((n, [, s]) => n + s.bytes, 0);
  console.log(`Export of ${(raw / MB).toFixed(0)} MB raw (${shape}) ready in ${(ready.totalMs / 1000).toFixed(1)} s`);
  console.log(`${oldOnly ? "Allocated and not freed by a minor collection" : "Allocated on the JS heap"} over the export (sampled): ${(total / MB).toFixed(0)} MB`);
  for (const [name, site] of sites.slice(0, 20)) {
    console.log(`${(site.bytes / MB).toFixed(1).padStart(8)} MB ${((100 * site.bytes) / total).toFixed(1).padStart(5)}%  ${name}`);
    for (const [caller, bytes] of [...site.callers].sort((a, b) => b[1] - a[1]).slice(0, 2)) {
      console.log(`${"".padStart(24)}${(bytes / MB).toFixed(1)} MB via ${caller}`);
    }
  }
} finally {
  await db.close();
}
