/**
 * `npm run bench -- --rebuild`: redeploy-to-live of an app whose last commit changed one file, with
 * its layer cache warm, against the Docker CLI doing the same in the same run.
 *
 * The repository is a busybox httpd app built FROM scratch whose Dockerfile has a slow step standing
 * for a dependency install (`RUN`: writes 8 MB and sleeps 2 s) before the page is copied in. Each
 * measured round commits a new page (one file), then:
 * - Worker: `POST /console/api/apps/{id}/deploy` until the deploy is `live`, the app `running` and
 *   its hostname answers 200 with the new page through the Worker;
 * - CLI: `git archive` of the same commit + `docker build` (the legacy builder: Debian's docker.io
 *   has no buildx) + `docker run -d -p 127.0.0.1::8080` + polling until the first answer.
 * Both sides must take the slow step from their cache (checked in each build's output). The Worker
 * is measured once per `--builders` entry (RUNTIME_BUILDER), each on a fresh `wrangler dev`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { commitFiles, createRepository, startDevForge } from "../dev-forge";
import { dockerSocketAvailable, startDockerForwarder } from "../lib/docker-forwarder";
import { ROOT, generateSecrets, startDevServer } from "../lib/dev-server";
import { creditAccount } from "../lib/seed";
import type { BuilderChoice } from "../../src/runtime/docker-build";
import { type AppJson, PLAN, PORT, Session, deployLogUpToLive, settledOnOne, workerVars } from "./apps";
import { BENCH_IMAGE, appContainers, cliCleanup, cliDeploy, docker, dockerVersion, get } from "./apps-docker";
import type { BenchContext } from "./context";
import { describeMachine } from "./machine";
import type { BenchOptions } from "./options";
import { type BenchReport, type ResultRow, renderTable, row, writeReport, recorders } from "./report";

type Output = Pick<BenchContext, "log" | "progress">;

const PLAN_LIMITS = { memoryBytes: 1024 * 1024 * 1024, cpus: 1 };
const POLL_MS = 50;
const page = (n: number) => `<!doctype html><title>rebuild</title><h1>Page version ${n}</h1>\n`;
const SLOW_STEP = `RUN ["/bin/busybox", "sh", "-c", "/bin/busybox dd if=/dev/urandom of=/deps.bin bs=1M count=8 2>/dev/null && /bin/busybox sleep 2 && echo dependencies installed"]`;

function files(busybox: Uint8Array, version: number): Record<string, string | Uint8Array> {
  return {
    Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\n${SLOW_STEP}\nCOPY www /www\nEXPOSE ${PORT}\nCMD ["/bin/busybox", "httpd", "-f", "-p", "0.0.0.0:${PORT}", "-h", "/www"]\n`,
    busybox,
    "www/index.html": page(version),
  };
}

/** Whether a build's output shows the slow step taken from the cache (either builder's wording). */
export function slowStepCached(output: string): boolean {
  const lines = output.split("\n");
  const classic = lines.findIndex((l) => /Step \d+\/\d+ : RUN /.test(l));
  if (classic >= 0) return /Using cache/.test(lines[classic + 1] ?? "");
  const header = lines.find((l) => /^#\d+ \[\d+\/\d+\] RUN /.test(l));
  const number = header?.match(/^#(\d+) /)?.[1];
  return number !== undefined && lines.includes(`#${number} CACHED`);
}

async function deployUntilServing(session: Session, app: AppJson, proxy: { url: string; host: string }, body: string): Promise<{ ms: number; log: string }> {
  const started = performance.now();
  const { deploy } = await session.json<{ deploy: { id: string } }>("POST", `/console/api/apps/${app.id}/deploy`);
  const deadline = started + 180_000;
  for (;;) {
    const now = await session.json<AppJson>("GET", `/console/api/apps/${app.id}`);
    const latest = now.latest_deploy;
    if (latest?.id === deploy.id && latest.status === "failed") throw new Error(`the deploy failed: ${latest.failure?.message ?? "no message"}`);
    if (latest?.id === deploy.id && latest.status === "live" && now.status === "running") break;
    if (performance.now() > deadline) throw new Error(`deploy ${deploy.id} was not live after 180 s (${latest?.status})`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  for (;;) {
    const answer = await get(proxy.url, proxy.host).catch(() => null);
    if (answer?.status === 200 && answer.body === body) break;
    if (performance.now() > deadline) throw new Error(`the hostname did not serve the new page after the deploy was live (last: ${answer?.status})`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = performance.now() - started;
  return { ms, log: await deployLogUpToLive(session, app.id, deploy.id) };
}

export async function runRebuildBench(options: BenchOptions, { log, progress }: Output): Promise<void> {
  const version = await dockerVersion();
  if (!version || !(await dockerSocketAvailable())) throw new Error("The rebuild bench needs the Docker CLI and dockerd at /var/run/docker.sock.");
  const busybox = readFileSync("/bin/busybox");
  const began = Date.now();
  const runId = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
  const dir = mkdtempSync(join(tmpdir(), "control-plane-bench-rebuild-"));
  const forgeRoot = join(dir, "forge");
  const workDir = join(dir, "cli");
  mkdirSync(forgeRoot);
  mkdirSync(workDir);
  log(`Bench directory: ${dir}${options.keep ? " (kept)" : ""}; run ${runId}`);
  const { notes, checks, note, check } = recorders(log);
  const [engine, forge] = await Promise.all([startDockerForwarder(), startDevForge({ root: forgeRoot, port: 0 })]);
  let worker: Awaited<ReturnType<typeof startDevServer>> | null = null;
  let session: Session | null = null;
  let app: AppJson | null = null;
  const removeApp = async () => {
    if (!session || !app) return;
    const appId = app.id;
    app = null;
    await session.json("DELETE", `/console/api/apps/${appId}`).catch((err: Error) => note(`The app's Delete failed: ${err.message}`));
    const left = await appContainers(engine.url, appId).catch(() => []);
    if (left.length > 0) await docker(["rm", "-f", ...left.map((c) => c.id)]).catch(() => undefined);
    const images = (await docker(["images", "-q", `control-plane/app-${appId}`]).catch(() => "")).trim();
    if (images) await docker(["rmi", "-f", ...new Set(images.split("\n"))]).catch(() => undefined);
  };
  const cleanup = async () => {
    await removeApp();
    await worker?.stop();
    worker = null;
    await cliCleanup(runId);
    await Promise.allSettled([engine.close(), forge.close()]);
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  };
  const interrupted = () => void cleanup().then(() => process.exit(130));
  process.once("SIGINT", interrupted);
  try {
    let pageVersion = 0;
    const repo = await createRepository(forgeRoot, "bench", "rebuild", files(busybox, pageVersion), { forgeUrl: forge.url, modes: { busybox: 0o755 }, message: "busybox httpd app" });
    const repoDir = join(forgeRoot, "bench", "rebuild");
    progress("warm-up: first docker build + run");
    const warm = await cliDeploy({ repoDir, branch: "main", workDir, tag: `${BENCH_IMAGE}:${runId}-warm`, runId, limits: PLAN_LIMITS, port: PORT, keepTag: true });
    note(`CLI warm-up (not counted): build + run + answer ${(warm.totalMs / 1000).toFixed(2)} s.`);
    const rows: ResultRow[] = [];
    const secrets = generateSecrets();
    for (const builder of options.builders) {
      progress(`RUNTIME_BUILDER=${builder}: starting wrangler dev`);
      worker = await startDevServer({ persistTo: join(dir, `state-${builder}`), vars: { ...workerVars(engine.url, secrets), RUNTIME_BUILDER: builder } });
      session = new Session(worker.url);
      const email = `bench-rebuild-${builder}-${runId}@example.com`;
      await session.json("POST", "/console/api/signup", { email, password: "bench-password-1" });
      await creditAccount(worker.url, secrets.OPERATOR_TOKEN, email, 100_000, "Benchmark credit");
      app = await session.json<AppJson>("POST", "/console/api/apps", { name: "Bench rebuild", repository: repo, subdomain: `rebuild-${builder}-${runId}`, plan: PLAN });
      const proxy = { url: `http://127.0.0.1:${worker.port}/`, host: `${app.hostname}:${worker.port}` };
      progress(`RUNTIME_BUILDER=${builder}: first deploy (warm-up, fills the app's cache)`);
      const first = await deployUntilServing(session, app, proxy, page(pageVersion));
      note(`RUNTIME_BUILDER=${builder}: first deploy (not counted) ${(first.ms / 1000).toFixed(2)} s; builder used: ${/^#\d+ /m.test(first.log) ? "BuildKit" : "classic"}.`);
      const workerMs: number[] = [];
      const cliMs: number[] = [];
      const cached: string[] = [];
      for (let i = 1; i <= options.appDeploys; i++) {
        pageVersion++;
        await commitFiles(forgeRoot, "bench", "rebuild", { "www/index.html": page(pageVersion) }, { message: `page version ${pageVersion}` });
        await settledOnOne(engine.url, app.id);
        progress(`RUNTIME_BUILDER=${builder}: redeploy ${i}/${options.appDeploys} through the Worker`);
        const w = await deployUntilServing(session, app, proxy, page(pageVersion));
        workerMs.push(w.ms);
        await settledOnOne(engine.url, app.id);
        progress(`RUNTIME_BUILDER=${builder}: rebuild ${i}/${options.appDeploys} with the Docker CLI`);
        const c = await cliDeploy({ repoDir, branch: "main", workDir, tag: `${BENCH_IMAGE}:${runId}-${builder}-${i}`, runId, limits: PLAN_LIMITS, port: PORT });
        check(`CLI rebuild ${i} (${builder} pass) served the new page`, c.status === 200 && c.body === page(pageVersion), `HTTP ${c.status}`);
        cliMs.push(c.totalMs);
        cached.push(`${slowStepCached(w.log) ? "cached" : "BUILT"}/${slowStepCached(c.output) ? "cached" : "BUILT"}`);
        if (!slowStepCached(w.log)) note(`RUNTIME_BUILDER=${builder}: redeploy ${i} ran the slow step again; its log:\n${w.log.slice(-1500)}`);
      }
      check(`RUNTIME_BUILDER=${builder}: every measured Worker/CLI rebuild took the slow step from its cache`, cached.every((c) => c === "cached/cached"), cached.join(" "));
      const ms = (xs: number[]) => xs.map((x) => (x / 1000).toFixed(2)).join(" ");
      note(`RUNTIME_BUILDER=${builder}: Worker redeploys, s: ${ms(workerMs)}; CLI rebuild + run + answer, s: ${ms(cliMs)}.`);
      const r = row(
        `Rebuild to live (RUNTIME_BUILDER=${builder})`,
        "s, Deploy pressed -> 200 with the new page through the hostname; one file changed, cache warm",
        workerMs.map((x) => x / 1000),
        "git archive + docker build + docker run + first answer (same commit)",
        cliMs.map((x) => x / 1000),
        "lower",
      );
      rows.push(r);
      note(`RUNTIME_BUILDER=${builder}: ratio ${r.ratio.toFixed(2)} (goal: within 1.3x of the CLI) -> ${r.ratio <= 1.3 ? "met" : "NOT met"}.`);
      await removeApp();
      await worker.stop();
      worker = null;
    }
    const machine = await describeMachine();
    const report: BenchReport = {
      finishedAt: new Date().toISOString(),
      machine: { ...machine, tools: { wrangler: machine.tools.wrangler!, workerd: machine.tools.workerd!, docker: version } },
      options: { rebuild: true, deploys: options.appDeploys, builders: options.builders, durationSeconds: Math.round((Date.now() - began) / 1000) },
      rows,
      notes,
      checks,
    };
    await cleanup();
    process.off("SIGINT", interrupted);
    const out = resolve(ROOT, options.out);
    writeReport(out, report);
    log(`\n${renderTable(report)}\n\nWritten to ${out} in ${Math.round((Date.now() - began) / 1000)} s.`);
    if (checks.some((c) => !c.ok)) process.exitCode = 1;
  } catch (err) {
    await cleanup().catch(() => undefined);
    process.off("SIGINT", interrupted);
    throw err;
  }
}
