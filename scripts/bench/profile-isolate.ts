/**
 * `npx tsx scripts/bench/profile-isolate.ts [--size 50MB] [--shape mixed]`: whether what the
 * Worker's isolate holds during an export is live or only not yet collected. Every second it reads
 * `Runtime.getHeapUsage` (JS heap used, ArrayBuffers), then forces a full garbage collection
 * (`HeapProfiler.collectGarbage`) and reads it again; prints the peak of each.
 */
import { profileData, profiledDatabase } from "./profiled-database";
import { startExport, waitUntilReady } from "./worker-client";

interface HeapUsage {
  usedSize: number;
  backingStorageSize?: number;
}

const { shape, data } = profileData("50MB");
const db = await profiledDatabase("isolate", data);
const MB = 1e6;
try {
  const { account, databaseId, raw, devtools } = db;
  const read = async () => {
    const h = (await devtools.send<HeapUsage>("Runtime.getHeapUsage", {}, 30_000))!;
    return { heap: h.usedSize, buffers: h.backingStorageSize ?? 0 };
  };
  const peak = { before: { heap: 0, buffers: 0 }, after: { heap: 0, buffers: 0 } };
  const keep = (into: { heap: number; buffers: number }, m: { heap: number; buffers: number }) => {
    if (m.heap + m.buffers > into.heap + into.buffers) Object.assign(into, m);
  };
  const started = await startExport(account, databaseId);
  let done = false;
  const sampling = (async () => {
    while (!done) {
      keep(peak.before, await read());
      await devtools.send("HeapProfiler.collectGarbage", {}, 30_000);
      const after = await read();
      keep(peak.after, after);
      console.log(`  after a full GC: heap ${(after.heap / MB).toFixed(0)} MB, ArrayBuffers ${(after.buffers / MB).toFixed(0)} MB`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  const ready = await waitUntilReady(started);
  done = true;
  await sampling;
  devtools.close();
  const show = (m: { heap: number; buffers: number }) => `heap ${(m.heap / MB).toFixed(0)} MB + ArrayBuffers ${(m.buffers / MB).toFixed(0)} MB = ${((m.heap + m.buffers) / MB).toFixed(0)} MB`;
  console.log(`Export of ${(raw / MB).toFixed(0)} MB raw (${shape}) ready in ${(ready.totalMs / 1000).toFixed(1)} s`);
  console.log(`Peak as found: ${show(peak.before)}`);
  console.log(`Peak right after a full GC (what is live): ${show(peak.after)}`);
} finally {
  await db.close();
}
