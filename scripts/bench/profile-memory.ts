/**
 * `npx tsx scripts/bench/profile-memory.ts [--size 200MB]`: where the workerd runtime's resident
 * memory goes during one export and one whole download. Samples every 200 ms, from /proc, the
 * runtime's anonymous memory (heaps: V8, the allocator, buffers) apart from its file-backed pages
 * (mapped files: the binary, and the local SQLite and blob files of D1, R2 and Durable Objects),
 * and from the inspector the V8 heap and ArrayBuffers of each isolate (the Worker's, and the local
 * D1, R2 and queue emulations'). Prints the figures at rest, at the peak of each phase and after
 * it, and the largest mappings at the end.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { generateSecrets, startDevServer } from "../lib/dev-server";
import { runtimeWorkerdPid } from "./memory";
import { workerInspectorUrl } from "./inspector";
import { isolates } from "./isolate-memory";
import { parseSize } from "./options";
import { createAccount, createDatabase, fillDatabase, runSql, startExport, waitUntilReady } from "./worker-client";

const MB = 1024 * 1024;

interface Sample {
  anon: number;
  file: number;
  shmem: number;
}

function procStatus(pid: number): Sample {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0) * 1024;
  return { anon: kb("RssAnon"), file: kb("RssFile"), shmem: kb("RssShmem") };
}

/** The largest resident mappings of `pid`, by path (anonymous ones as `[anon]`). */
function topMappings(pid: number, n = 8): [string, number][] {
  const totals = new Map<string, number>();
  let current = "";
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      current = head[1] || "[anon]";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) totals.set(current, (totals.get(current) ?? 0) + Number(rss[1]) * 1024);
  }
  return [...totals].sort((a, b) => b[1] - a[1]).slice(0, n);
}

interface HeapUsage {
  usedSize: number;
  backingStorageSize?: number;
}

const { values } = parseArgs({ options: { size: { type: "string", default: "200MB" } } });
const size = parseSize(values.size!);
const dir = mkdtempSync(join(tmpdir(), "control-plane-memory-"));
const server = await startDevServer({ persistTo: join(dir, "state"), vars: { ...generateSecrets(), EXPORT_COOLDOWN_SECONDS: "0" } });
try {
  const runtimePid = runtimeWorkerdPid(server.process.pid!, server.port);
  const inspectors = await isolates(runtimePid, workerInspectorUrl(server));
  const mb = (n: number) => `${(n / MB).toFixed(0).padStart(5)} MB`;

  /** Process memory from /proc, then V8 heap and ArrayBuffer backing stores of every isolate holding over 4 MB. */
  async function show(label: string): Promise<void> {
    const p = procStatus(runtimePid);
    console.log(`${label.padEnd(26)} anon ${mb(p.anon)}  file ${mb(p.file)}  shmem ${mb(p.shmem)}`);
    for (const [id, devtools] of inspectors) {
      const h = await devtools.send<HeapUsage>("Runtime.getHeapUsage", {}, 20_000);
      if (!h) {
        console.log(`${"".padEnd(28)}${id.padEnd(26)} (no answer)`);
        continue;
      }
      const backing = h.backingStorageSize ?? 0;
      if (h.usedSize + backing > 4 * MB) console.log(`${"".padEnd(28)}${id.padEnd(26)} V8 heap ${mb(h.usedSize)}  array buffers ${mb(backing)}`);
    }
  }

  /** Runs `work` while sampling /proc every 200 ms; prints the peak and the timeline every 2 s. */
  async function during(label: string, work: () => Promise<void>): Promise<void> {
    let peak = { anon: 0, file: 0, shmem: 0 };
    const timeline: number[] = [];
    const timer = setInterval(() => {
      const s = procStatus(runtimePid);
      if (s.anon > peak.anon) peak = s;
      timeline.push(s.anon);
    }, 200);
    await work();
    clearInterval(timer);
    console.log(`${`${label}, peak`.padEnd(26)} anon ${mb(peak.anon)}  file ${mb(peak.file)}  shmem ${mb(peak.shmem)}`);
    console.log(`  anon every 2 s, MB: ${timeline.filter((_, i) => i % 10 === 0).map((b) => (b / MB).toFixed(0)).join(" ")}`);
    await show(`${label}, after`);
  }

  await show("idle");
  const account = await createAccount(server.url, "memory@example.com");
  const databaseId = await createDatabase(account, "memory");
  const raw = await fillDatabase(account, databaseId, size);
  console.log(`filled ${(raw / 1e6).toFixed(0)} MB of raw data`);
  await show("after fill");
  // Every page of every table read once, outside any export: what reading the data alone costs.
  for (const scan of [
    "SELECT sum(length(email || ifnull(display_name, '') || hex(ifnull(avatar, x'')))) FROM accounts",
    "SELECT sum(length(payload)) FROM events",
    "SELECT sum(length(title || body || hex(ifnull(attachment, x'')) || hex(checksum))) FROM documents",
  ]) await runSql(account, databaseId, scan);
  await show("after reading every row");

  let url = "";
  await during("export", async () => {
    const started = await startExport(account, databaseId);
    const ready = await waitUntilReady(started);
    console.log(`export ready in ${(ready.totalMs / 1000).toFixed(1)} s, archive ${(ready.archiveBytes / 1e6).toFixed(0)} MB`);
    url = started.url;
  });
  await during("download", async () => {
    await promisify(execFile)("curl", ["-sS", "--fail", "-o", "/dev/null", url]);
  });
  console.log("largest mappings now:");
  for (const [path, bytes] of topMappings(runtimePid)) console.log(`  ${mb(bytes)}  ${path}`);
  for (const devtools of inspectors.values()) devtools.close();
} finally {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
