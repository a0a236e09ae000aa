/**
 * `npx tsx scripts/bench/profile-request.ts [--route poll|ready|start|healthz] [--seconds 5] [--existing]`: one
 * route under load (wrk, 20 connections; for `start`, Node's loop over fresh databases, or with
 * `--existing` over databases exported once already) while the
 * Worker's isolate runs under a CPU profile (through wrangler's inspector). Prints the self time
 * by function and writes the `.cpuprofile` (open it in Chrome DevTools) to a temporary directory.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { RECORD_KEEP_MS } from "../../src/exports/record-keep";
import { ROOT, generateSecrets, startDevServer } from "../lib/dev-server";
import { workerInspector } from "./inspector";
import { setLocalTraces } from "./local-traces";
import { type Reply, runLoad, statusCounts } from "./load";
import { createAccount, createDatabase, startExport, waitUntilReady } from "./worker-client";
import { wrk } from "./wrk";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values } = parseArgs({ options: { route: { type: "string", default: "poll" }, seconds: { type: "string", default: "5" }, existing: { type: "boolean", default: false } } });
const seconds = Number(values.seconds);
const dir = mkdtempSync(join(tmpdir(), "control-plane-profile-request-"));
const persistTo = join(dir, "state");
// As in the bench: wrangler's local trace recording off (local-traces.ts).
setLocalTraces(false);
const server = await startDevServer({ persistTo, vars: { ...generateSecrets(), EXPORT_COOLDOWN_SECONDS: "0", RATE_LIMIT_PER_MINUTE: "1000000", RATE_LIMIT_BURST: "1000000" } });
try {
  const base = `http://127.0.0.1:${server.port}`;
  const account = await createAccount(server.url, "profile@example.com");
  let work: () => Promise<unknown>;
  const route = values.route!;
  if (route === "start") {
    // Every start needs a database of its own (one export per database): the warm-up and the
    // profiled run take 100 each.
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push(await createDatabase(account, `p${i}`));
    // --existing: the profiled starts export the warm-up's databases again, so their gate and
    // database objects exist (as in the bench's median start); by default every start is its
    // database's first.
    let round = 0;
    work = async () => {
      const offset = values.existing ? 0 : 100 * round;
      const warmUp = round++ === 0;
      const result = await runLoad({
        clients: 50,
        requestsPerClient: 2,
        next: (c, i) => ({ method: "POST", url: `${base}/api/v1/dbs/${ids[offset + c * 2 + i]}/export`, headers: { Authorization: `Bearer ${account.token}` } }),
      });
      if (values.existing && warmUp) await new Promise((resolve) => setTimeout(resolve, 10_000)); // the warm-up's exports finish first
      return result;
    };
  } else if (route === "healthz") {
    work = () => wrk({ url: `${base}/healthz`, connections: 20, seconds });
  } else {
    const started = await startExport(account, await createDatabase(account, "link"));
    await waitUntilReady(started);
    if (route === "poll") {
      const exportId = /\/exports\/([0-9a-f-]+)\//.exec(started.url)![1]!;
      const d1dir = join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
      for (const f of readdirSync(d1dir).filter((n) => n.endsWith(".sqlite"))) {
        await promisify(execFile)("sqlite3", [join(d1dir, f), `UPDATE exports SET status='pending', finished_at=NULL, size_bytes=NULL, sha256=NULL, deadline_at=${Date.now() + 3_600_000} WHERE id='${exportId}'`]).catch(() => undefined);
      }
    }
    // The Worker keeps the record it read for RECORD_KEEP_MS: the write above shows once that has passed.
    await new Promise((resolve) => setTimeout(resolve, RECORD_KEEP_MS + 100));
    const url = started.url.replace("//localhost:", "//127.0.0.1:");
    work = () => wrk({ url, connections: 20, seconds });
  }
  const devtools = await workerInspector(server);
  await devtools.send("Profiler.enable");
  await devtools.send("Profiler.setSamplingInterval", { interval: 100 });
  await work(); // warm-up
  await devtools.send("Profiler.start");
  const result = await work();
  const { profile } = (await devtools.send<{ profile: Profile }>("Profiler.stop"))!;
  devtools.close();
  console.log(JSON.stringify(result).slice(0, 300));
  const replies = (result as { replies?: Reply[] }).replies;
  if (replies) console.log(`Replies by status: ${statusCounts(replies)}`);
  const file = join(dir, `${route}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  // The profile's line numbers are those of wrangler's bundle, which it deletes on exit: keep a copy.
  const bundles = join(ROOT, ".wrangler", "tmp");
  const newest = readdirSync(bundles).filter((d) => d.startsWith("dev-")).map((d) => join(bundles, d)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (newest) copyFileSync(join(newest, "index.js"), join(dir, "index.js"));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const dt = (profile.timeDeltas[i] ?? 0) / 1000;
    all += dt;
    const name = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"}:${n.callFrame.lineNumber}`;
    const node = byId.get(id)!;
    self.set(name(node), (self.get(name(node)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let p: number | undefined = id; p !== undefined; p = parent.get(p)) {
      const k = name(byId.get(p)!);
      if (seen.has(k)) continue;
      seen.add(k);
      total.set(k, (total.get(k) ?? 0) + dt);
    }
  });
  const show = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).forEach(([k, v]) => console.log(`  ${v.toFixed(0).padStart(7)} ms ${((100 * v) / all).toFixed(1).padStart(5)}%  ${k}`));
  console.log(`Profile of ${route}: ${all.toFixed(0)} ms sampled\nSelf time:`);
  show(self, 30);
  console.log("Total time (self and callees):");
  show(total, 40);
  console.log(`\nCPU profile: ${file} (the bundle its lines refer to: ${join(dir, "index.js")})`);
} finally {
  await server.stop();
}
