/**
 * `npm run bench -- --apps`: apps on the machine's real dockerd, each figure against a baseline
 * measured in the same run on the same repository (a busybox httpd app built FROM scratch):
 *
 * - Deploy to live: `POST /console/api/apps/{id}/deploy` until the app is `running`, its latest
 *   deploy `live` and its hostname answers 200 through the Worker; against `git archive` of the
 *   same branch + `docker build` (legacy builder, as the Worker's `POST /build`) + `docker run -d
 *   -p 127.0.0.1::8080` + polling until the first HTTP answer. Both sides build with the layer
 *   cache warm (the engine caches layers across redeploys and the Worker cannot turn that off): one
 *   warm-up on each side is done first and not counted, and every measured build is checked to
 *   have taken each step from the cache.
 * - Requests per second: the same number of requests with the same concurrency through the
 *   Worker's proxy (`<subdomain>.localhost:<port>`, sent to 127.0.0.1 with that Host) against the
 *   app's container on its published 127.0.0.1 port; rps, p50 and p99.
 *
 * Cleans up after itself: the app is deleted through the console (which removes its container and
 * image), and the CLI side's containers and tags are removed.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { createRepository, startDevForge } from "../dev-forge";
import { dockerSocketAvailable, startDockerForwarder } from "../lib/docker-forwarder";
import { ROOT, generateSecrets, startDevServer } from "../lib/dev-server";
import { creditAccount } from "../lib/seed";
import { swarmDeploys, swarmUnavailable, withSwarmWorker } from "./apps-swarm";
import { BENCH_IMAGE, BENCH_LABEL, appContainers, docker, cliCleanup, cliDeploy, dockerVersion, firstAnswer, get } from "./apps-docker";
import type { BenchContext } from "./context";
import { type LoadResult, percentile, runLoad, statusCounts } from "./load";
import { describeMachine } from "./machine";
import type { BenchOptions } from "./options";
import { type BenchReport, type ResultRow, renderTable, row, writeReport, recorders } from "./report";

type Output = Pick<BenchContext, "log" | "progress">;

/** The app's page: small, so the figures are about the path to the container, not the bytes. */
export const PAGE = "<!doctype html><title>bench</title><h1>Hello from a busybox httpd app</h1>\n";
export const PORT = 8080;
/** The plan the app is created on; the CLI container gets the same limits (see src/apps/plans.ts). */
export const PLAN = "pro";
const PLAN_LIMITS = { memoryBytes: 1024 * 1024 * 1024, cpus: 1 };
/** How often the console is asked whether the deploy is live. */
const POLL_MS = 50;
/**
 * A load run stops early after this long: `wrangler dev` answers tens of requests per second on a
 * small machine, so a fixed count alone could take minutes. Requests per second are over what was
 * sent within the bound.
 */
const LOAD_BOUND_MS = 15_000;

/** The Worker's settings for the run: no rate limit in the way, the engine through the forwarder. */
export function workerVars(engineUrl: string, secrets: ReturnType<typeof generateSecrets>): Record<string, string> {
  return {
    ...secrets,
    RATE_LIMIT_PER_MINUTE: "1000000",
    RATE_LIMIT_BURST: "1000000",
    RUNTIME_URL: engineUrl,
    PROBE_TIMEOUT_SECONDS: "30",
    // The benchmark's forge is on loopback.
    ALLOW_LOCAL_SOURCES: "true",
    // A replaced instance drains 2 s and gets 1 s to stop (30 s and 10 s by default): a deploy is
    // measured to live, and the next one waits until only one instance is left.
    DRAIN_SECONDS: "2",
    STOP_GRACE_SECONDS: "1",
  };
}

/** The repository: the same busybox httpd app the end-to-end tests deploy. */
export function appFiles(busybox: Uint8Array): Record<string, string | Uint8Array> {
  return {
    Dockerfile:
      `FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE ${PORT}\n` +
      `CMD ["/bin/busybox", "httpd", "-f", "-p", "0.0.0.0:${PORT}", "-h", "/www"]\n`,
    busybox,
    "www/index.html": PAGE,
  };
}

/** A console session (cookie) that can also read text replies such as deploy logs. */
export class Session {
  private cookie = "";
  constructor(readonly base: string) {}

  private async send(method: string, path: string, body?: unknown): Promise<Response> {
    const res = await fetch(this.base + path, {
      method,
      headers: { Origin: this.base, "Content-Type": "application/json", ...(this.cookie ? { Cookie: this.cookie } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const set = res.headers.get("set-cookie");
    if (set) this.cookie = set.split(";")[0]!;
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
    return res;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await (await this.send(method, path, body)).json()) as T;
  }

  async text(path: string): Promise<string> {
    return (await this.send("GET", path)).text();
  }
}

export interface AppJson {
  id: string;
  subdomain: string;
  hostname: string;
  status: string;
  deploy_in_progress: boolean;
  latest_deploy: { id: string; status: string; failure?: { kind: string; message: string } } | null;
}

/** One deploy through the Worker, ms from the Deploy request. */
interface WorkerDeploy {
  /** Until the console first showed the deploy live and the app running. */
  liveMs: number;
  /** Until the hostname then answered 200 through the Worker (the figure in the table). */
  totalMs: number;
  deployId: string;
  cached: boolean;
}

export async function deployThroughWorker(session: Session, app: AppJson, proxy: { url: string; host: string }): Promise<WorkerDeploy> {
  const started = performance.now();
  const { deploy } = await session.json<{ deploy: { id: string } }>("POST", `/console/api/apps/${app.id}/deploy`);
  const deadline = started + 120_000;
  for (;;) {
    const now = await session.json<AppJson>("GET", `/console/api/apps/${app.id}`);
    const latest = now.latest_deploy;
    if (latest?.id === deploy.id && latest.status === "failed") throw new Error(`the deploy failed: ${latest.failure?.message ?? "no message"}`);
    if (latest?.id === deploy.id && latest.status === "live" && now.status === "running") break;
    if (performance.now() > deadline) throw new Error(`deploy ${deploy.id} was not live after 120 s (${latest?.status})`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const liveMs = performance.now() - started;
  for (;;) {
    const answer = await get(proxy.url, proxy.host).catch(() => null);
    if (answer?.status === 200 && answer.body === PAGE) break;
    if (performance.now() > deadline) throw new Error(`the hostname did not answer 200 after the deploy was live (last: ${answer?.status})`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const totalMs = performance.now() - started;
  const log = await deployLogUpToLive(session, app.id, deploy.id);
  const steps = log.split("\n").filter((l) => /Step \d+\/\d+ : /.test(l)).length;
  const usingCache = log.split("\n").filter((l) => l.includes("Using cache")).length;
  return { liveMs, totalMs, deployId: deploy.id, cached: steps > 1 && usingCache >= steps - 1 };
}

/** A deploy's log once its "Live:" line is there (the log is written out up to it at the switch); what there is after 10 s. */
export async function deployLogUpToLive(session: Session, appId: string, deployId: string): Promise<string> {
  let log = "";
  for (let i = 0; i < 100; i++) {
    log = await session.text(`/console/api/apps/${appId}/deploys/${deployId}/log`);
    if (/^Live: /m.test(log)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return log;
}

/** Waits until the previous instance is removed (the Worker retires it a couple of seconds after live). */
export async function settledOnOne(engineUrl: string, appId: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while ((await appContainers(engineUrl, appId)).length > 1) {
    if (performance.now() > deadline) throw new Error(`the previous instance of ${appId} was still there after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  sent: number;
  statuses: string;
}

/** A closed-loop load run; a reply counts as good when it is 200 with `expect` (the page by default). */
export async function load(options: BenchOptions, url: string, host: string | undefined, requests: number, expect?: string): Promise<LoadFigures> {
  const perClient = Math.max(1, Math.ceil(requests / options.appClients));
  const bound = performance.now() + LOAD_BOUND_MS;
  const result: LoadResult = await runLoad({
    clients: options.appClients,
    requestsPerClient: perClient,
    next: () => ({ method: "GET", url, headers: host ? { Host: host } : ({} as Record<string, string>) }),
    goOn: () => performance.now() < bound,
  });
  const ok = result.replies.filter((r) => r.status === 200 && (expect === undefined ? r.body === PAGE : r.body.includes(expect)));
  const ms = result.replies.map((r) => r.ms);
  return { rps: ok.length / result.seconds, p50: percentile(ms, 50), p99: percentile(ms, 99), ok: ok.length, sent: result.replies.length, statuses: statusCounts(result.replies) };
}

/** Runs the apps benchmark, prints the table and writes the JSON report. */
export async function runAppsBench(options: BenchOptions, { log, progress }: Output): Promise<void> {
  const version = await dockerVersion();
  if (!version || !(await dockerSocketAvailable())) {
    throw new Error("The apps bench needs the Docker CLI and dockerd at /var/run/docker.sock: apt-get install -y docker.io, then start dockerd.");
  }
  let busybox: Uint8Array;
  try {
    busybox = readFileSync("/bin/busybox");
  } catch {
    throw new Error("The apps bench builds its image FROM scratch with /bin/busybox: apt-get install -y busybox-static.");
  }
  const began = Date.now();
  const runId = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
  const dir = mkdtempSync(join(tmpdir(), "control-plane-bench-apps-"));
  const forgeRoot = join(dir, "forge");
  const workDir = join(dir, "cli");
  mkdirSync(forgeRoot);
  mkdirSync(workDir);
  log(`Bench directory: ${dir}${options.keep ? " (kept)" : ""}; run ${runId}`);
  const { notes, checks, note, check } = recorders(log);

  progress("starting the docker forwarder, the dev forge and wrangler dev");
  const [engine, forge] = await Promise.all([startDockerForwarder(), startDevForge({ root: forgeRoot, port: 0 })]);
  let worker: Awaited<ReturnType<typeof startDevServer>> | null = null;
  let session: Session | null = null;
  let app: AppJson | null = null;
  const cleanup = async () => {
    if (session && app) {
      const appId = app.id;
      app = null;
      const remove = () => session!.json("DELETE", `/console/api/apps/${appId}`);
      const deleted = await remove().then(
        () => true,
        async (err: Error) => {
          note(`The app's Delete failed: ${err.message}`);
          const said = (worker?.output() ?? "").split("\n").filter((l) => /"level":"(warn|error)"|Error/.test(l) && !l.includes("Request.cf") && !l.includes("workers.cloudflare.com"));
          if (said.length > 0) note(`wrangler said:\n  ${said.slice(-8).join("\n  ")}`);
          await new Promise((r) => setTimeout(r, 3000));
          return remove().then(() => true, (again: Error) => (note(`Delete pressed again also failed: ${again.message}`), false));
        },
      );
      const left = await appContainers(engine.url, appId).catch(() => []);
      const images = (await docker(["images", "-q", `control-plane/app-${appId}`]).catch(() => "?")).trim();
      check("the app's Delete removed its containers and images", deleted && left.length === 0 && images === "", `containers left: ${left.length}; images left: ${images || "none"}`);
      // Whatever Delete left is still this run's: removed here so the machine is left as found.
      if (left.length > 0) await docker(["rm", "-f", ...left.map((c) => c.id)]).catch(() => undefined);
      if (images) await docker(["rmi", "-f", ...new Set(images.split("\n"))]).catch(() => undefined);
    }
    await cliCleanup(runId);
    const leftCli = await docker(["ps", "-aq", "--filter", `label=${BENCH_LABEL}=${runId}`]).catch(() => "?");
    // This run's tags only: another run's leftovers (one interrupted before its cleanup) are not this run's to judge.
    const leftTags = (await docker(["images", "--format", "{{.Repository}}:{{.Tag}}", BENCH_IMAGE]).catch(() => "?"))
      .split("\n")
      .filter((t) => t === "?" || t.startsWith(`${BENCH_IMAGE}:${runId}-`))
      .join(" ");
    check("the CLI side's containers and tags are removed", leftCli.trim() === "" && leftTags === "", `containers: ${leftCli.trim() || "none"}; ${BENCH_IMAGE}:${runId}-* tags: ${leftTags || "none"}`);
    await worker?.stop();
    await Promise.allSettled([engine.close(), forge.close()]);
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  };
  const interrupted = () => void cleanup().then(() => process.exit(130));
  process.once("SIGINT", interrupted);
  try {
    const secrets = generateSecrets();
    worker = await startDevServer({ persistTo: join(dir, "state"), vars: workerVars(engine.url, secrets) });
    const repo = await createRepository(forgeRoot, "bench", "httpd", appFiles(busybox), {
      forgeUrl: forge.url,
      modes: { busybox: 0o755 },
      message: "busybox httpd app",
    });
    const repoDir = join(forgeRoot, "bench", "httpd");
    session = new Session(worker.url);
    const email = `bench-apps-${runId}@example.com`;
    await session.json("POST", "/console/api/signup", { email, password: "bench-password-1" });
    // The first deploy is charged (billing rule 1): the operator credits the bench account first.
    await creditAccount(worker.url, secrets.OPERATOR_TOKEN, email, 100_000, "Benchmark credit");
    app = await session.json<AppJson>("POST", "/console/api/apps", { name: "Bench httpd", repository: repo, subdomain: `bench-${runId}`, plan: PLAN });
    const proxy = { url: `http://127.0.0.1:${worker.port}/`, host: `${app.hostname}:${worker.port}` };
    log(`App ${app.id} at http://${proxy.host}/ from ${repo}`);

    // Warm-ups, not counted: the first deploy and the first CLI build fill the layer cache.
    progress("warm-up: first deploy through the Worker");
    const firstDeploy = await deployThroughWorker(session, app, proxy);
    progress("warm-up: first docker build + run");
    const firstCli = await cliDeploy({ repoDir, branch: "main", workDir, tag: `${BENCH_IMAGE}:${runId}-warm`, runId, limits: PLAN_LIMITS, port: PORT, keepTag: true });
    note(`Warm-ups (not counted): first Deploy to live ${(firstDeploy.totalMs / 1000).toFixed(2)} s, first CLI build + run + answer ${(firstCli.totalMs / 1000).toFixed(2)} s.`);

    const workerRuns: WorkerDeploy[] = [];
    const cliRuns: Awaited<ReturnType<typeof cliDeploy>>[] = [];
    for (let i = 1; i <= options.appDeploys; i++) {
      await settledOnOne(engine.url, app.id);
      progress(`deploy ${i}/${options.appDeploys} through the Worker`);
      workerRuns.push(await deployThroughWorker(session, app, proxy));
      await settledOnOne(engine.url, app.id);
      progress(`deploy ${i}/${options.appDeploys} with the Docker CLI`);
      cliRuns.push(await cliDeploy({ repoDir, branch: "main", workDir, tag: `${BENCH_IMAGE}:${runId}-${i}`, runId, limits: PLAN_LIMITS, port: PORT }));
    }
    check("every measured Worker build took each step from the layer cache", workerRuns.every((r) => r.cached), workerRuns.map((r) => (r.cached ? "cached" : "BUILT")).join(" "));
    check("every measured CLI build took each step from the layer cache", cliRuns.every((r) => r.cached), cliRuns.map((r) => (r.cached ? "cached" : "BUILT")).join(" "));
    check("the CLI container answered 200 with the page", cliRuns.every((r) => r.status === 200 && r.body === PAGE), cliRuns.map((r) => r.status).join(" "));
    const ms = (xs: number[]) => xs.map((x) => (x / 1000).toFixed(2)).join(" ");
    note(`Worker deploys, s to "live" on the console: ${ms(workerRuns.map((r) => r.liveMs))}; then to 200 through the hostname: ${ms(workerRuns.map((r) => r.totalMs))}.`);
    note(`CLI runs, s of docker build alone: ${ms(cliRuns.map((r) => r.buildMs))}; build + run + first answer: ${ms(cliRuns.map((r) => r.totalMs))}.`);

    const rows: ResultRow[] = [
      row(
        "Deploy to live",
        "s, Deploy pressed -> live and 200 through the hostname (layers cached)",
        workerRuns.map((r) => r.totalMs / 1000),
        "git archive + docker build + docker run + first answer (layers cached)",
        cliRuns.map((r) => r.totalMs / 1000),
        "lower",
      ),
    ];

    // Requests per second: the app's one running container, through the Worker and directly.
    await settledOnOne(engine.url, app.id);
    const running = (await appContainers(engine.url, app.id)).find((c) => c.state === "running" && c.hostPort);
    if (!running) throw new Error("the app has no running container with a published port");
    const direct = `http://127.0.0.1:${running.hostPort}/`;
    log(`Load: ${options.appRequests} requests, ${options.appClients} clients, ${options.runs} runs per side; proxy ${proxy.url} (Host ${proxy.host}) vs direct ${direct}`);
    const first = await firstAnswer(direct, 5000);
    check("the container answers directly with the page", first.status === 200 && first.body === PAGE, `HTTP ${first.status}`);
    const healthz = `http://127.0.0.1:${worker.port}/healthz`;
    progress("load warm-up");
    await load(options, proxy.url, proxy.host, Math.min(200, options.appRequests));
    await load(options, direct, undefined, Math.min(200, options.appRequests));
    const viaWorker: LoadFigures[] = [];
    const viaDirect: LoadFigures[] = [];
    const viaHealthz: LoadFigures[] = [];
    for (let i = 1; i <= options.runs; i++) {
      progress(`load run ${i}/${options.runs} through the Worker`);
      viaWorker.push(await load(options, proxy.url, proxy.host, options.appRequests));
      progress(`load run ${i}/${options.runs} directly`);
      viaDirect.push(await load(options, direct, undefined, options.appRequests));
      progress(`load run ${i}/${options.runs} on the Worker's /healthz`);
      viaHealthz.push(await load(options, healthz, undefined, options.appRequests, "ok"));
    }
    const expected = Math.ceil(options.appRequests / options.appClients) * options.appClients;
    for (const [side, runs] of [["through the Worker", viaWorker], ["directly", viaDirect], ["to /healthz", viaHealthz]] as const) {
      check(`every request ${side} answered 200 with the expected body`, runs.every((r) => r.ok === r.sent), runs.map((r) => r.statuses).join(" | "));
      if (runs.some((r) => r.sent < expected)) note(`Load runs ${side} sent ${runs.map((r) => r.sent).join(", ")} of ${expected} requests within the ${LOAD_BOUND_MS / 1000} s bound.`);
    }
    const metric = `${options.appClients} clients, up to ${expected} requests or ${LOAD_BOUND_MS / 1000} s per run`;
    rows.push(
      row("Requests/s", metric, viaWorker.map((r) => r.rps), "the container's published port, directly", viaDirect.map((r) => r.rps), "higher"),
      row("Latency p50", `ms, ${options.appClients} clients`, viaWorker.map((r) => r.p50), "the container's published port, directly", viaDirect.map((r) => r.p50), "lower"),
      row("Latency p99", `ms, ${options.appClients} clients`, viaWorker.map((r) => r.p99), "the container's published port, directly", viaDirect.map((r) => r.p99), "lower"),
      row("Requests/s, proxy vs /healthz", `${options.appClients} clients`, viaWorker.map((r) => r.rps), "the Worker's own /healthz on the same wrangler dev (no upstream)", viaHealthz.map((r) => r.rps), "higher"),
    );

    // The same deploys and load on a two-node swarm, against the single-engine figures above.
    const unavailable = await swarmUnavailable();
    if (unavailable) note(`Swarm rows skipped: ${unavailable}.`);
    else {
      await withSwarmWorker({ dir, repo, runId, log, progress }, async ({ session: onSwarm, app: swarmApp, proxy: swarmProxy }) => {
        const { warmMs, runs } = await swarmDeploys(onSwarm, swarmApp, swarmProxy, options.appDeploys, progress);
        note(`Swarm warm-up (not counted): first Deploy to live ${(warmMs / 1000).toFixed(2)} s; measured: ${ms(runs.map((r) => r.totalMs))}.`);
        check("every measured swarm build took each step from the layer cache", runs.every((r) => r.cached), runs.map((r) => (r.cached ? "cached" : "BUILT")).join(" "));
        progress("swarm: load warm-up");
        await load(options, swarmProxy.url, swarmProxy.host, Math.min(200, options.appRequests));
        const viaSwarm: LoadFigures[] = [];
        for (let i = 1; i <= options.runs; i++) {
          progress(`swarm: load run ${i}/${options.runs} through the Worker`);
          viaSwarm.push(await load(options, swarmProxy.url, swarmProxy.host, options.appRequests));
        }
        check("every request through the Worker to the swarm answered 200 with the page", viaSwarm.every((r) => r.ok === r.sent), viaSwarm.map((r) => r.statuses).join(" | "));
        rows.push(
          row("Deploy to live, swarm", "s, the same on a 2-node swarm (built on the manager, pulled by the worker, service update)", runs.map((r) => r.totalMs / 1000), "the same Deploy on one Docker engine (row 1)", workerRuns.map((r) => r.totalMs / 1000), "lower"),
          row("Requests/s, swarm", `${metric}, to the app on the swarm's worker node`, viaSwarm.map((r) => r.rps), "through the Worker to one Docker engine (row 2)", viaWorker.map((r) => r.rps), "higher"),
        );
      });
    }

    const machine = await describeMachine();
    const report: BenchReport = {
      finishedAt: new Date().toISOString(),
      machine: {
        ...machine,
        tools: {
          wrangler: machine.tools.wrangler!,
          workerd: machine.tools.workerd!,
          docker: version,
          "app plan": `${PLAN} (${PLAN_LIMITS.memoryBytes / 2 ** 20} MiB, ${PLAN_LIMITS.cpus} CPU, same limits on the CLI container)`,
        },
      },
      options: {
        apps: true,
        deploys: options.appDeploys,
        loadRuns: options.runs,
        requests: expected,
        clients: options.appClients,
        durationSeconds: Math.round((Date.now() - began) / 1000),
      },
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
