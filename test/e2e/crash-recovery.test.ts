/**
 * Nothing lost or stuck when the control plane dies mid-change (README, Operations): a real
 * `wrangler dev` on the machine's dockerd is killed with SIGKILL, its whole process group at once,
 * while four changes are in flight on four apps (the drain after a switch, a build whose Dockerfile
 * step sleeps, a variable switch whose new instance is starting, a Delete), then started again on
 * the same local state, as `npm start` would: the reconciler runs once, and the cron's run (which
 * wrangler dev does not fire by itself) is asked for while waiting. It converges: no deploy
 * unfinished, exactly one instance per running app serving its live deploy, no container, image,
 * network or port row that no record explains, the wallet as before the kill and equal to its
 * ledger, and Deploy works on every app.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepository, commitFiles, startDevForge } from "../../scripts/dev-forge";
import { startDockerForwarder } from "../../scripts/lib/docker-forwarder";
import { type DevServer, freePort, generateSecrets, startDevServer } from "../../scripts/lib/dev-server";
import { type AppJson, BUSYBOX, creditAccount, httpdApp } from "./apps-harness";
import { ConsoleSession } from "./export-helpers";
import { E2E_OPERATOR_TOKEN, localD1Rows } from "./harness";

const run = Date.now() % 100000;
const SECRETS = generateSecrets();
/** The drain after a switch is long enough to be killed in; the reconciler's grace short enough to wait for. */
const VARS = { ...SECRETS, OPERATOR_TOKEN: E2E_OPERATOR_TOKEN, ALLOW_LOCAL_SOURCES: "true", PROBE_TIMEOUT_SECONDS: "20", DRAIN_SECONDS: "30", STOP_GRACE_SECONDS: "1", RECONCILE_GRACE_SECONDS: "5" };

let persistTo: string;
let forgeRoot: string;
let port: number;
let worker: DevServer;
let engine: Awaited<ReturnType<typeof startDockerForwarder>>;
let forge: Awaited<ReturnType<typeof startDevForge>>;
let session: ConsoleSession;
const appIds: string[] = [];

const start = () => startDevServer({ persistTo, port, vars: { ...VARS, RUNTIME_URL: engine.url } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const docker = (args: string[]) => promisify(execFile)("docker", args).then((r) => r.stdout.split("\n").filter(Boolean));
const rows = (sql: string) => localD1Rows(persistTo, sql);

/** SIGKILL to wrangler and the workerd it started (one process group), as a crash would. */
async function killWorker(): Promise<void> {
  const exited = new Promise((ok) => worker.process.once("exit", ok));
  process.kill(-worker.process.pid!, "SIGKILL");
  await exited;
}

async function newApp(name: string, files: Record<string, string | Uint8Array>): Promise<AppJson> {
  const repository = await createRepository(forgeRoot, "acme", name, files, { modes: { busybox: 0o755 }, forgeUrl: forge.url, message: "v1" });
  const app = await session.call<AppJson>("POST", "/console/api/apps", { name, repository, subdomain: `${name}-${run}` });
  appIds.push(app.id);
  return app;
}

async function deploy(appId: string, wait = true): Promise<AppJson> {
  await session.call("POST", `/console/api/apps/${appId}/deploy`);
  for (let i = 0; wait && i < 240; i++) {
    const app = await session.call<AppJson>("GET", `/console/api/apps/${appId}`);
    if (!app.deploy_in_progress) return app;
    await sleep(500);
  }
  return session.call<AppJson>("GET", `/console/api/apps/${appId}`);
}

/** An app's page through the Worker, as curl gets it: status, then body. */
async function page(subdomain: string): Promise<string> {
  const { stdout } = await promisify(execFile)("curl", ["-sS", "-m", "10", "-w", "\n%{http_code}", `http://${subdomain}.localhost:${port}/`]).catch(() => ({ stdout: "\n000" }));
  const cut = stdout.lastIndexOf("\n");
  return `${stdout.slice(cut + 1)} ${stdout.slice(0, cut)}`;
}

/** What is wrong now, one sentence each: empty once the engine and the records agree. */
async function disagreements(): Promise<string[]> {
  const wrong: string[] = [];
  const apps = await rows("SELECT id, status, ifnull(instance_id, ''), ifnull(live_deploy_id, ''), subdomain FROM apps");
  const unfinished = await rows("SELECT id, status FROM deploys WHERE status IN ('building', 'starting')");
  if (unfinished.length > 0) wrong.push(`deploys unfinished: ${unfinished.map((r) => r.join(" ")).join(", ")}`);
  const ledger = await rows("SELECT instance_id FROM retire_ledger");
  if (ledger.length > 0) wrong.push(`retire ledger rows: ${ledger.length}`);
  const known = new Map(apps.map(([id, status, instance]) => [id!, { status: status!, instance: instance! }]));
  for (const id of appIds) {
    const app = known.get(id);
    const containers = await docker(["ps", "-aq", "--no-trunc", "--filter", `label=control-plane.app_id=${id}`]);
    const expected = app?.status === "running" || (app?.status === "stopped" && app.instance) ? [app.instance] : [];
    if (containers.join() !== expected.join()) wrong.push(`app ${id} (${app?.status ?? "deleted"}): containers ${containers.join(" ") || "none"}, records name ${expected.join(" ") || "none"}`);
    const images = await docker(["images", "--format", "{{.Repository}}:{{.Tag}}", `control-plane/app-${id}`]);
    const kept = app ? (await rows(`SELECT image FROM deploys WHERE app_id = '${id}' AND image IS NOT NULL AND image_removed = 0 AND status IN ('live', 'superseded')`)).map(([image]) => image) : [];
    const stray = images.filter((image) => !kept.includes(image));
    if (stray.length > 0) wrong.push(`app ${id}: images no record keeps: ${stray.join(" ")}`);
    const networks = await docker(["network", "ls", "-q", "--filter", `name=^control-plane-app-${id}$`]);
    if (!app && networks.length > 0) wrong.push(`deleted app ${id} still has its network`);
  }
  for (const [port, appId, instance] of await rows("SELECT port, app_id, ifnull(instance_id, '') FROM instance_ports")) {
    if (known.get(appId!)?.instance !== instance) wrong.push(`port row ${port} of app ${appId} names ${instance || "no instance"}, not the app's`);
  }
  for (const [id, status, , live, subdomain] of apps) {
    if (status !== "running") continue;
    const [message] = (await rows(`SELECT ifnull(commit_message, '') FROM deploys WHERE id = '${live}'`))[0] ?? [""];
    const served = await page(subdomain!);
    if (!served.startsWith("200") || !served.includes(`${subdomain!.replace(`-${run}`, "")} ${message!.trim()}`)) wrong.push(`app ${id} serves "${served.slice(0, 60)}", not its live deploy (${message})`);
  }
  return wrong;
}

const reconcile = () => fetch(`http://127.0.0.1:${port}/admin/api/reconcile`, { method: "POST", headers: { Authorization: `Bearer ${E2E_OPERATOR_TOKEN}` } }).then((r) => r.json());

/** Waits until the engine and the records agree (at most 5 minutes); what still disagrees then. */
async function converged(): Promise<string[]> {
  let wrong: string[] = [];
  for (let i = 0; i < 60; i++) {
    wrong = await disagreements();
    if (wrong.length === 0) break;
    await sleep(5000);
    // The cron's run, which wrangler dev does not fire by itself.
    if (i % 4 === 3) await reconcile();
  }
  return wrong;
}


/** wrangler's output of the control plane's earlier runs (before each kill). */
const earlierOutput: string[] = [];
const testStart = Math.floor(Date.now() / 1000);

/**
 * What a failed convergence leaves for whoever reads it: each app's name, deploys and retire rows,
 * the engine's events for its containers and images, and wrangler's lines that name it (written
 * to the file the assertion message names).
 */
async function explain(wrong: string[]): Promise<string[]> {
  if (wrong.length === 0) return wrong;
  const file = join(tmpdir(), `crash-recovery-${run}.txt`);
  const parts: string[] = [];
  const output = [...earlierOutput, worker.output()].join("\n---- restart ----\n").replace(/\x1b\[[0-9;]*m/g, "");
  for (const id of appIds) {
    if (!wrong.some((w) => w.includes(id))) continue;
    parts.push(`==== app ${id}`, ...(await rows(`SELECT name, status, instance_id, live_deploy_id, image FROM apps WHERE id = '${id}'`)).map((r) => r.join(" | ")));
    parts.push("-- deploys", ...(await rows(`SELECT id, kind, status, started_at, finished_at, attempts, instance_id, image, image_removed, commit_message, failure FROM deploys WHERE app_id = '${id}' ORDER BY started_at`)).map((r) => r.join(" | ")));
    parts.push("-- engine events", ...(await promisify(execFile)("docker", ["events", "--since", String(testStart), "--until", String(Math.floor(Date.now() / 1000)), "--format", "{{.Time}} {{.Type}} {{.Action}} {{.Actor.ID}} {{index .Actor.Attributes \"name\"}}", "--filter", `label=control-plane.app_id=${id}`]).catch((e: Error) => ({ stdout: e.message }))).stdout.split("\n"));
    parts.push("-- control plane", ...output.split("\n").filter((line) => line.includes(id)));
  }
  writeFileSync(file, parts.join("\n"));
  return [...wrong, `details: ${file}`];
}

beforeAll(async () => {
  persistTo = mkdtempSync(join(tmpdir(), "control-plane-crash-"));
  forgeRoot = mkdtempSync(join(tmpdir(), "control-plane-crash-forge-"));
  [engine, forge, port] = await Promise.all([startDockerForwarder(), startDevForge({ root: forgeRoot, port: 0 }), freePort()]);
  worker = await start();
  session = new ConsoleSession(`http://127.0.0.1:${port}`);
  const email = `crash-${run}@example.com`;
  await session.call("POST", "/console/api/signup", { email, password: "correct horse battery" });
  await creditAccount(`http://127.0.0.1:${port}`, email, 100_000);
}, 900_000);

afterAll(async () => {
  await worker?.stop();
  for (const id of appIds) {
    const containers = await docker(["ps", "-aq", "--filter", `label=control-plane.app_id=${id}`]).catch(() => []);
    if (containers.length > 0) await docker(["rm", "-f", ...containers]).catch(() => []);
    await docker(["network", "rm", `control-plane-app-${id}`]).catch(() => []);
    const images = await docker(["images", "--format", "{{.Repository}}:{{.Tag}}", `control-plane/app-${id}`]).catch(() => []);
    if (images.length > 0) await docker(["rmi", "-f", ...images]).catch(() => []);
  }
  await Promise.all([engine?.close(), forge?.close()]);
  rmSync(persistTo, { recursive: true, force: true });
  rmSync(forgeRoot, { recursive: true, force: true });
}, 120_000);

const site = (name: string, version: string, options: { slowStart?: boolean } = {}): Record<string, string | Uint8Array> => {
  const files = httpdApp(`<p>${name} ${version}</p>`);
  // An instance that takes 4 s to answer: its variable switch is still starting when the kill comes.
  if (options.slowStart) files.Dockerfile = String(files.Dockerfile).replace(/CMD \[.*\]\n$/, `CMD ["/bin/busybox", "sh", "-c", "/bin/busybox sleep 4; exec /bin/busybox httpd -f -p 0.0.0.0:8080 -h /www"]\n`);
  return { ...files, busybox: BUSYBOX };
};

describe("a crash of the whole control plane mid-change", () => {
  it("converges after SIGKILL during a drain, a build, a variable switch and a Delete", async () => {
    const [drain, build, vars, gone, idle] = await Promise.all([
      newApp("drain", site("drain", "v1")),
      newApp("build", site("build", "v1")),
      newApp("vars", site("vars", "v1", { slowStart: true })),
      newApp("gone", site("gone", "v1")),
      newApp("idle", site("idle", "v1")),
    ]);
    for (const deployed of await Promise.all([drain, build, vars, gone, idle].map((app) => deploy(app.id)))) {
      expect(deployed.status, JSON.stringify(deployed.latest_deploy)).toBe("running");
    }

    // The drain: a switch to v2, whose old instance drains DRAIN_SECONDS (30) when the kill comes.
    await commitFiles(forgeRoot, "acme", "drain", { "www/index.html": "<p>drain v2</p>" }, { message: "v2" });
    expect((await deploy(drain.id)).latest_deploy?.status).toBe("live");
    // The build: v2's Dockerfile sleeps 8 s in a step.
    await commitFiles(forgeRoot, "acme", "build", { "www/index.html": "<p>build v2</p>", Dockerfile: String(site("build", "v2").Dockerfile).replace("EXPOSE", `RUN ["/bin/busybox", "sleep", "8"]\nEXPOSE`) }, { message: "v2" });
    await deploy(build.id, false);
    for (let i = 0; i < 60 && (await rows(`SELECT build_alive_at FROM deploys WHERE app_id = '${build.id}' AND status = 'building' AND build_alive_at IS NOT NULL`)).length === 0; i++) await sleep(250);
    const wallet = await session.call<{ balance: number; entries: unknown[] }>("GET", "/console/api/wallet");
    // The variable switch: its new instance takes 4 s to answer.
    const env = await session.call<{ env: { version: number } }>("GET", `/console/api/apps/${vars.id}`);
    await session.call("PUT", `/console/api/apps/${vars.id}/env`, { version: env.env.version, variables: [{ key: "GREETING", value: "hello" }] });
    // The Delete: killed while it runs.
    const deleting = session.call("DELETE", `/console/api/apps/${gone.id}`).catch(() => undefined);
    await sleep(1500);
    earlierOutput.push(worker.output());
    await killWorker();
    await deleting;

    worker = await start();
    await reconcile();
    expect(await explain(await converged())).toEqual([]);
    expect(await session.call("GET", "/console/api/wallet")).toEqual(wallet);

    // Deploy works on every app still there (the Delete cut short was run to its end by the next alarm);
    // their old instances drain and go as after any switch.
    const left = (await rows("SELECT id FROM apps")).map(([id]) => id!);
    for (const deployed of await Promise.all(left.map((id) => deploy(id)))) expect(deployed.latest_deploy?.status, JSON.stringify(deployed.latest_deploy)).toBe("live");
    expect(await explain(await converged())).toEqual([]);
    const after = await session.call<{ balance: number; entries: { amount: number }[] }>("GET", "/console/api/wallet");
    expect(after.balance).toBe(after.entries.reduce((sum, e) => sum + e.amount, 0));
  }, 1_200_000);
});
