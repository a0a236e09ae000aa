/**
 * `npx tsx scripts/bench/profile-isolate.ts [--size 50MB] [--shape mixed]`: whether what the
 * Worker's isolate holds during an export is live or only not yet collected. Every second it reads
 * `Runtime.getHeapUsage` (JS heap used, ArrayBuffers), then forces a full garbage collection
 * (`HeapProfiler.collectGarbage`) and reads it again; prints the peak of each.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { generateSecrets, startDevServer } from "../lib/dev-server";
import { inspector } from "./inspector";
import { parseSize } from "./options";
import { SHAPES, type Shape, recipeOf } from "./shapes";
import { createAccount, createDatabase, fillDatabase, startExport, waitUntilReady } from "./worker-client";

interface HeapUsage {
  usedSize: number;
  backingStorageSize?: number;
}

const { values } = parseArgs({ options: { size: { type: "string", default: "50MB" }, shape: { type: "string", default: "mixed" } } });
const shape = values.shape as Shape;
if (!(SHAPES as readonly string[]).includes(shape)) throw new Error(`--shape takes ${SHAPES.join(", ")}`);
const dir = mkdtempSync(join(tmpdir(), "control-plane-isolate-"));
const server = await startDevServer({ persistTo: join(dir, "state"), vars: { ...generateSecrets(), EXPORT_COOLDOWN_SECONDS: "0", RATE_LIMIT_PER_MINUTE: "1000000", RATE_LIMIT_BURST: "1000000" } });
const MB = 1e6;
try {
  const account = await createAccount(server.url, "isolate@example.com");
  const databaseId = await createDatabase(account, "isolate");
  const raw = await fillDatabase(account, databaseId, shape === "mixed" ? parseSize(values.size!) : recipeOf(shape, false));
  const args = server.process.spawnargs;
  const port = args[args.indexOf("--inspector-port") + 1];
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const devtools = await inspector(target!.webSocketDebuggerUrl);
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
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
