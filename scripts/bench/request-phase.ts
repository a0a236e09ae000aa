/**
 * Requests against the floor: the control plane and a trivial Hono Worker (floor-worker/) run side
 * by side under the same `wrangler dev`, and wrk loads one then the other, in turns, with the same
 * connections for the same time. Rows:
 *
 * - `/healthz` on both;
 * - an app through the proxy (a busybox httpd app deployed on dockerd, `<subdomain>.localhost`)
 *   against the trivial Worker's `/proxy`, which makes one `fetch` to the same container;
 * - the same app answering with `Set-Cookie: ...; Domain=localhost` (a CGI), which the proxy's
 *   cookie rule (README, "What we enforce") rewrites to host-only and the trivial `/proxy` passes as it
 *   is;
 * - a poll of a signed download link while the export is pending (503) and once it is ready (200,
 *   a small archive), against the trivial `/healthz`; the ready poll also against the trivial
 *   Worker's `GET /object`, one R2 read of the same archive (not a goal row: it shows what the
 *   local R2 emulation costs);
 * - start export under 50 clients (Node's closed loop: each start needs a database of its own),
 *   p50 against our own `/healthz` under the same load, and the trivial one as the floor;
 * - then two comparisons in turns, in one pass each (in-turns.ts), which the cookie-rule and
 *   metrics-cost goals read: the cookie CGI against the same CGI without the cookie, and the app on
 *   this control plane against the same app on a second one with `METRICS_COLLECTION=false`.
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { startDevForge } from "../dev-forge";
import { dockerSocketAvailable, startDockerForwarder } from "../lib/docker-forwarder";
import { type DevServer, generateSecrets, startDevServer } from "../lib/dev-server";
import { RECORD_KEEP_MS } from "../../src/exports/record-keep";
import { workerVars } from "./apps";
import { dockerVersion } from "./apps-docker";
import { type BenchApp, benchRepository, deployApp } from "./bench-app";
import type { BenchContext } from "./context";
import { startFloorWorker } from "./floor";
import { type Reply, percentile, runLoad, statusCounts } from "./load";
import type { BenchOptions } from "./options";
import { type ResultRow, row, withFloor } from "./report";
import { type BenchAccount, createAccount, createDatabase, startExport, waitUntilReady } from "./worker-client";
import { type WrkResult, wrk } from "./wrk";
import { COOKIE_COST_SUBJECT, COOKIE_SUBJECT, METRICS_COST_SUBJECT, PROXY_SUBJECT } from "./goals";
import { measureInTurns, pairsOfTurns } from "./in-turns";

type Output = Pick<BenchContext, "log" | "progress" | "note" | "check">;

/** One measure: a request to ours and its counterpart on the floor Worker. */
interface Pair {
  subject: string;
  ours: { url: string; headers?: Record<string, string> };
  floor: { url: string; headers?: Record<string, string> };
  floorName: string;
  /** Which replies are right: every one 2xx (200s) or none (the pending link's 503s). */
  expect: "2xx" | "non2xx";
}

/** The local D1 file of a wrangler dev state directory (the one holding the `exports` table). */
async function localD1File(persistTo: string): Promise<string> {
  const dir = join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".sqlite"))) {
    const path = join(dir, name);
    const { stdout } = await promisify(execFile)("sqlite3", [path, "SELECT count(*) FROM sqlite_schema WHERE name = 'exports'"]);
    if (stdout.trim() === "1") return path;
  }
  throw new Error(`no local D1 file with an exports table under ${dir}`);
}

/**
 * A link that answers 503 for as long as the bench needs: an export of an empty database, finished,
 * then put back to `pending` (deadline an hour away) in the local D1 file, as a job not yet picked
 * up from the queue would leave it.
 */
async function pendingLink(persistTo: string, account: BenchAccount, databaseId: string): Promise<string> {
  const started = await startExport(account, databaseId);
  await waitUntilReady(started);
  const exportId = /\/exports\/([0-9a-f-]+)\/download/.exec(started.url)![1]!;
  const d1 = await localD1File(persistTo);
  const deadline = Date.now() + 3_600_000;
  await promisify(execFile)("sqlite3", [
    d1,
    `UPDATE exports SET status = 'pending', started_at = NULL, finished_at = NULL, size_bytes = NULL, sha256 = NULL, deadline_at = ${deadline}, runner_alive_at = ${deadline} WHERE id = '${exportId}'`,
  ]);
  // runner_alive_at: a runner that looks alive until the deadline, so the runner watch
  // (src/exports/runner-watch.ts) does not queue the job again and finish the export mid-run.
  // The Worker keeps the record it read for RECORD_KEEP_MS (src/exports/store.ts): a write behind
  // its back, like this one, shows once that has passed.
  await new Promise((resolve) => setTimeout(resolve, RECORD_KEEP_MS + 100));
  const res = await fetch(started.url, { headers: { Range: "bytes=0-0" } });
  await res.arrayBuffer();
  if (res.status !== 503) throw new Error(`the link put back to pending answered ${res.status}, not 503`);
  return started.url;
}

/** The link on 127.0.0.1, where wrangler listens (the signature covers the path, not the host). */
const onLoopback = (link: string) => link.replace("//localhost:", "//127.0.0.1:");

function p50s(replies: Reply[]): number {
  return percentile(
    replies.map((r) => r.ms),
    50,
  );
}

/** One pair's wrk runs, ours and the floor in turns, as its requests/s, p50 and p99 rows. */
async function measurePair(options: BenchOptions, p: Pair, out: Output): Promise<ResultRow[]> {
  const connections = options.wrkConnections;
  const seconds = options.wrkSeconds;
  const mine: WrkResult[] = [];
  const theirs: WrkResult[] = [];
  for (let run = 1; run <= options.runs; run++) {
    out.progress(`requests: ${p.subject}, run ${run}/${options.runs}`);
    mine.push(await wrk({ ...p.ours, connections, seconds }));
    theirs.push(await wrk({ ...p.floor, connections, seconds }));
  }
  const right = (r: WrkResult) => r.errors === 0 && (p.expect === "2xx" ? r.non2xx === 0 : r.non2xx === r.requests);
  out.check(
    `${p.subject}: every reply as expected`,
    mine.every(right) && theirs.every((r) => r.errors === 0 && r.non2xx === 0),
    `ours ${mine.map((r) => `${r.requests} requests, ${r.non2xx} not 2xx, ${r.errors} errors`).join("; ")} | floor ${theirs.map((r) => `${r.requests}, ${r.non2xx}, ${r.errors}`).join("; ")}`,
  );
  const who = `wrk, ${connections} connections`;
  return [
    withFloor(row(p.subject, `requests/s (${who})`, mine.map((r) => r.rps), p.floorName, theirs.map((r) => r.rps), "higher"), p.floorName, theirs.map((r) => r.rps)),
    withFloor(row(p.subject, `p50, ms (${who})`, mine.map((r) => r.p50), p.floorName, theirs.map((r) => r.p50), "lower"), p.floorName, theirs.map((r) => r.p50)),
    withFloor(row(p.subject, `p99, ms (${who})`, mine.map((r) => r.p99), p.floorName, theirs.map((r) => r.p99), "lower"), p.floorName, theirs.map((r) => r.p99)),
  ];
}

/**
 * Runs the request rows with their own wrangler dev pair (ours with the engine behind it, and the
 * floor Worker), then stops them. Returns the rows.
 */
export async function measureRequests(options: BenchOptions, dir: string, out: Output): Promise<ResultRow[]> {
  const { log, progress, note, check } = out;
  const docker = (await dockerVersion()) !== null && (await dockerSocketAvailable());
  const forgeRoot = join(dir, "forge");
  const [engine, forge] = docker ? await Promise.all([startDockerForwarder(), startDevForge({ root: forgeRoot, port: 0 })]) : [null, null];
  const secrets = generateSecrets();
  const persistTo = join(dir, "requests-state");
  const vars = { ...workerVars(engine?.url ?? "", secrets), EXPORT_COOLDOWN_SECONDS: "0" };
  // The metrics-cost pass (in-turns.ts) needs a second control plane with collection off.
  // Left out of --quick: one more wrangler dev and one more deploy.
  const metricsPass = engine !== null && !options.quick;
  let ours: DevServer | null = null;
  let oursOff: DevServer | null = null;
  let floor: DevServer | null = null;
  const apps: BenchApp[] = [];
  try {
    progress("requests: starting wrangler dev for the control plane and for the floor Worker");
    // Side by side; whichever started is stopped below if another did not.
    const launched = await Promise.allSettled([
      startDevServer({ persistTo, vars }),
      startFloorWorker(join(dir, "floor-state")),
      metricsPass ? startDevServer({ persistTo: join(dir, "requests-state-metrics-off"), vars: { ...vars, METRICS_COLLECTION: "false" } }) : Promise.resolve(null),
    ]);
    const [oursStart, floorStart, offStart] = launched;
    ours = oursStart.status === "fulfilled" ? oursStart.value : null;
    floor = floorStart.status === "fulfilled" ? floorStart.value : null;
    oursOff = offStart.status === "fulfilled" ? offStart.value : null;
    const failed = launched.flatMap((s) => (s.status === "rejected" ? [s.reason as Error] : []));
    if (failed.length > 0 || !ours || !floor) throw failed[0];
    const base = `http://127.0.0.1:${ours.port}`;
    const floorBase = `http://127.0.0.1:${floor.port}`;
    const account = await createAccount(ours.url, "bench-requests@example.com");

    const pairs: Pair[] = [
      { subject: "/healthz", ours: { url: `${base}/healthz` }, floor: { url: `${floorBase}/healthz` }, floorName: "trivial Worker /healthz", expect: "2xx" },
    ];
    let repository: string | null = null;
    if (engine && forge) {
      progress("requests: deploying the busybox app on dockerd");
      repository = await benchRepository(forgeRoot, forge.url);
      const app = await deployApp({ base, port: ours.port, operatorToken: secrets.OPERATOR_TOKEN }, repository, engine.url);
      apps.push(app);
      pairs.push({
        subject: PROXY_SUBJECT,
        ours: { url: `${base}/`, headers: { Host: app.host } },
        floor: { url: `${floorBase}/proxy`, headers: { "X-Upstream": app.instanceUrl } },
        floorName: "trivial Worker /proxy, one fetch to the same container",
        expect: "2xx",
      });
      pairs.push({
        subject: COOKIE_SUBJECT,
        ours: { url: `${base}/cgi-bin/cookie`, headers: { Host: app.host } },
        floor: { url: `${floorBase}/proxy`, headers: { "X-Upstream": `${app.instanceUrl}cgi-bin/cookie` } },
        floorName: "trivial Worker /proxy, the same CGI, its cookie passed as it is",
        expect: "2xx",
      });
    } else {
      note("No dockerd at /var/run/docker.sock: the app proxy row is left out.");
    }
    progress("requests: preparing a pending and a ready download link");
    const readyStart = await startExport(account, await createDatabase(account, "ready link"));
    await waitUntilReady(readyStart);
    const pending = await pendingLink(persistTo, account, await createDatabase(account, "pending link"));
    pairs.push(
      { subject: "Poll of a signed link, export pending (503)", ours: { url: onLoopback(pending) }, floor: { url: `${floorBase}/healthz` }, floorName: "trivial Worker /healthz", expect: "non2xx" },
      { subject: "Poll of a signed link, ready (200, small archive)", ours: { url: onLoopback(readyStart.url) }, floor: { url: `${floorBase}/healthz` }, floorName: "trivial Worker /healthz", expect: "2xx" },
      // The same ready poll against the least a Worker does to serve that archive: one R2 read of
      // the same bytes, streamed. Not a goal row (the goal sets the poll against /healthz); it
      // splits the ready poll's cost between the local R2 emulation and the rest.
      {
        subject: "Ready archive, the same poll",
        ours: { url: onLoopback(readyStart.url) },
        floor: { url: `${floorBase}/object` },
        floorName: "trivial Worker, one R2 read of the same archive",
        expect: "2xx",
      },
    );
    const archive = await fetch(onLoopback(readyStart.url));
    if (archive.status !== 200) throw new Error(`the ready link answered ${archive.status}`);
    const stored = await fetch(`${floorBase}/object`, { method: "PUT", body: await archive.arrayBuffer() });
    if (stored.status !== 204) throw new Error(`the floor Worker's PUT /object answered ${stored.status}`);

    const connections = options.wrkConnections;
    const seconds = options.wrkSeconds;
    log(`Requests: wrk, ${connections} connections, ${seconds} s per run, ${options.runs} runs per side, ours and the floor in turns`);
    // One short warm-up per side, not counted: the first requests compile code and fill caches.
    for (const p of pairs) {
      await wrk({ ...p.ours, connections, seconds: 1 });
      await wrk({ ...p.floor, connections, seconds: 1 });
    }
    const rows: ResultRow[] = [];
    for (const p of pairs) rows.push(...(await measurePair(options, p, out)));

    // Start export under concurrent clients: each start on a database of its own (no 429).
    const clients = options.clients;
    const starts = Math.max(1, Math.min(options.starts, 2));
    progress(`requests: creating ${clients * starts} databases for the start-export load`);
    const ids: string[] = [];
    for (let i = 0; i < clients * starts; i++) ids.push(await createDatabase(account, `start ${i}`));
    const start: number[] = [];
    const healthz: number[] = [];
    const floorHealthz: number[] = [];
    for (let run = 1; run <= options.runs; run++) {
      progress(`requests: start export under ${clients} clients, run ${run}/${options.runs}`);
      const loadOf = (url: string) => runLoad({ clients, requestsPerClient: starts * 2, next: () => ({ method: "GET", url }) });
      healthz.push(p50s((await loadOf(`${base}/healthz`)).replies));
      floorHealthz.push(p50s((await loadOf(`${floorBase}/healthz`)).replies));
      const started = await runLoad({
        clients,
        requestsPerClient: starts,
        next: (c, i) => ({ method: "POST", url: `${base}/api/v1/dbs/${ids[c * starts + i]}/export`, headers: { Authorization: `Bearer ${account.token}` } }),
      });
      const accepted = started.replies.filter((r) => r.status === 200);
      check(`start export load run ${run}`, accepted.length === ids.length, statusCounts(started.replies));
      start.push(p50s(accepted));
      progress(`requests: waiting for ${accepted.length} exports of empty databases`);
      for (const { body } of accepted) await waitUntilReady({ url: (JSON.parse(body) as { url: string }).url, startedAt: performance.now(), startMs: 0 });
    }
    rows.push(
      withFloor(
        row(`Start export of an empty database (${clients} clients)`, "p50, ms", start, "our /healthz, same clients", healthz, "lower"),
        "trivial Worker /healthz, same clients",
        floorHealthz,
      ),
    );
    const turns = pairsOfTurns(options.runs);
    const app = apps[0];
    // What the cookie rule costs (README, "What we enforce"): the cookie CGI against the same CGI
    // without the cookie, both through the proxy, in turns in one pass (in-turns.ts).
    if (app) {
      const cgi = (name: string) => ({ url: `${base}/cgi-bin/${name}`, host: app.host });
      const bName = "the same CGI without the cookie, through the proxy, in turns";
      rows.push(...(await measureInTurns({ subject: COOKIE_COST_SUBJECT, a: cgi("cookie"), b: cgi("plain"), bName, pairs: turns, wrk: { connections, seconds } }, out)));
    }
    // What counting an app's requests costs (docs/metrics.md): the same app on a second control
    // plane with METRICS_COLLECTION off, both loaded in turns in one pass (in-turns.ts).
    if (oursOff && engine && repository && app) {
      progress("requests: deploying the same app on the control plane with metrics collection off");
      const offApp = await deployApp({ base: `http://127.0.0.1:${oursOff.port}`, port: oursOff.port, operatorToken: secrets.OPERATOR_TOKEN }, repository, engine.url);
      apps.push(offApp);
      const on = { url: `${base}/`, host: app.host };
      const off = { url: `http://127.0.0.1:${oursOff.port}/`, host: offApp.host };
      const bName = "the same app on a second control plane with METRICS_COLLECTION=false, in turns";
      rows.push(...(await measureInTurns({ subject: METRICS_COST_SUBJECT, a: on, b: off, bName, pairs: turns, wrk: { connections, seconds } }, out)));
    }
    return rows;
  } finally {
    for (const app of apps) await app.remove().catch((err: Error) => note(`The bench app's Delete failed: ${err.message}`));
    await Promise.allSettled([ours?.stop(), oursOff?.stop(), floor?.stop(), engine?.close(), forge?.close()]);
  }
}
