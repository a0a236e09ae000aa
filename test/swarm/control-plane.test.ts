/**
 * The whole control plane on a two-node swarm: a real `wrangler dev` with RUNTIME_KIND=swarm
 * against the test swarm's manager, a dev forge, and curl through the Worker by Host. An app whose
 * services may run only on nodes labelled `apps=on` (SWARM_CONSTRAINTS; only the worker at first)
 * is refused while no node can take it (no charge), then built on the manager, pulled by the worker
 * through the registry and served through the Worker; a variable change is a service update that
 * no request of a loop sees fail; after the worker is drained Swarm reschedules the app onto the
 * manager and the proxy follows within seconds; Restart, Stop, Start and Delete act on the one
 * service. The operator's report (GET /admin/api/runtime) runs the no-new-privileges probe on
 * both nodes through the Worker.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevDns, startDevDns } from "../../scripts/dev-dns";
import { commitFiles, createRepository, startDevForge } from "../../scripts/dev-forge";
import { type AppJson, BUSYBOX, creditAccount, signedUp } from "../e2e/apps-harness";
import type { ConsoleSession } from "../e2e/export-helpers";
import { E2E_OPERATOR_TOKEN, type Worker, startWorker } from "../e2e/harness";
import { readFile } from "node:fs/promises";
import { SwarmRuntime } from "../../src/runtime/swarm";
import { probeContext } from "../runtime/images";
import { tarStream } from "../runtime/tar";
import { type TestSwarm, startSwarm } from "./swarm-env";

const run = promisify(execFile);
const SECRETS = ["swarm-greeting-one", "swarm-greeting-two"] as const;

let s: TestSwarm;
let worker: Worker;
let forge: { url: string; close(): Promise<void> };
let dns: DevDns;
let session: ConsoleSession;
let email: string;
const forgeRoot = mkdtempSync(join(tmpdir(), "control-plane-swarm-forge-"));
let managerId: string;
let workerId: string;

const docker = (sock: string, ...args: string[]) => run("docker", ["-H", `unix://${sock}`, ...args]).then((r) => r.stdout.trim());
const manager = (...args: string[]) => docker(s.managerSock, ...args);

beforeAll(async () => {
  [s, forge, dns] = await Promise.all([startSwarm({ name: "cpcp", nodes: 2, subnet: "10.77.2" }), startDevForge({ root: forgeRoot, port: 0 }), startDevDns()]);
  workerId = await manager("node", "ls", "-q", "--filter", "role=worker");
  managerId = await manager("node", "ls", "-q", "--filter", "role=manager");
  await manager("node", "update", "--label-add", "apps=on", workerId);
  // The report's probe image, pushed to the registry once, as README "Deploying" has the operator do.
  const probe = await new SwarmRuntime({ url: s.managerUrl, registry: s.registry }).build({ context: tarStream(probeContext(await readFile("/bin/busybox"))), dockerfile: "Dockerfile", tag: "cp-probe:1" });
  expect(probe).toEqual({ ok: true, image: "cp-probe:1" });
  worker = await startWorker({
    SWARM_PROBE_IMAGE: `${s.registry}/cp-probe:1`,
    RUNTIME_URL: s.managerUrl,
    RUNTIME_KIND: "swarm",
    REGISTRY: s.registry,
    SWARM_CONSTRAINTS: "node.labels.apps==on",
    PROBE_TIMEOUT_SECONDS: "15",
    DNS_RESOLVER_URL: dns.resolverUrl,
  });
  email = `swarm-${Date.now()}@example.com`;
  session = await signedUp(worker.url, { email, credit: 0 });
}, 240_000);

afterAll(async () => {
  const { apps } = (await session?.call<{ apps: AppJson[] }>("GET", "/console/api/apps").catch(() => ({ apps: [] }))) ?? { apps: [] };
  for (const app of apps) await session.call("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  await worker?.stop();
  await Promise.all([forge?.close(), dns?.close()]);
  rmSync(forgeRoot, { recursive: true, force: true });
  await s?.down();
}, 120_000);

/** busybox httpd on 8080 (bound to `bind`) with a CGI page printing GREETING. */
function cgiFiles(bind = "0.0.0.0"): Record<string, string | Uint8Array> {
  return {
    Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "httpd", "-f", "-p", "${bind}:8080", "-h", "/www"]\n`,
    busybox: BUSYBOX,
    "www/index.html": "<p>home</p>",
    "www/cgi-bin/env": '#!/bin/busybox sh\necho "Content-Type: text/plain"\necho ""\nprintf "GREETING=%s" "$GREETING"\n',
  };
}
const MODES = { busybox: 0o755, "www/cgi-bin/env": 0o755 };
let repoName: string;

function cgiRepository(name: string): Promise<string> {
  repoName = name;
  return createRepository(forgeRoot, "acme", name, cgiFiles(), { modes: MODES, forgeUrl: forge.url });
}

/** A request to the app's hostname through the Worker, as curl sends it. */
async function curlApp(subdomain: string, path = "/"): Promise<{ status: number; body: string }> {
  const { stdout } = await run("curl", ["-sS", "-m", "10", "-w", "\n%{http_code}", `http://${subdomain}.localhost:${worker.port}${path}`]);
  const cut = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const getApp = (id: string) => session.call<AppJson & { env: { applying: boolean; applied_version: number } }>("GET", `/console/api/apps/${id}`);
const wallet = () => session.call<{ balance: number }>("GET", "/console/api/wallet");
const press = (id: string, control: string) => session.call("POST", `/console/api/apps/${id}/${control}`);

async function deployAndWait(id: string): Promise<AppJson> {
  await press(id, "deploy");
  return until("the deploy to end", async () => {
    const app = await getApp(id);
    return app.deploy_in_progress ? null : app;
  }, 90_000).catch(async (error: Error) => {
    const { service } = await placement(id);
    const state = service ? await manager("service", "inspect", service, "--format", "{{json .Spec.EndpointSpec.Ports}} {{json .UpdateStatus}}") : "no service";
    const tasks = service ? await manager("service", "ps", "--no-trunc", "--format", "{{.Image}} {{.DesiredState}} {{.CurrentState}} {{.Error}} {{.Ports}}", service) : "";
    const log = await session.call<{ deploys?: { id: string }[] }>("GET", `/console/api/apps/${id}`).then(() => "").catch(() => "");
    throw new Error(`${error.message}; service: ${state}\n${tasks}${log}\nworker log:\n${worker.output().split("\n").filter((l) => /warn|error/i.test(l)).slice(-10).join("\n")}`);
  });
}

/** The app's service and the node ids of its running tasks (both test nodes have one host name). */
async function placement(appId: string): Promise<{ service: string; nodes: string[] }> {
  const service = await manager("service", "ls", "-q", "--filter", `label=control-plane.app_id=${appId}`);
  const tasks = service ? (await manager("service", "ps", "-q", "--no-trunc", "--filter", "desired-state=running", service)).split("\n").filter(Boolean) : [];
  const states = tasks.length > 0 ? (await manager("inspect", "--format", "{{.NodeID}} {{.Status.State}}", ...tasks)).split("\n") : [];
  return { service, nodes: states.filter((l) => l.endsWith(" running")).map((l) => l.split(" ")[0]!) };
}

describe("the control plane on a two-node swarm", () => {
  let app: AppJson;

  it("the operator's report names the swarm and finds nothing to fix: both nodes keep containers from gaining privileges", async () => {
    const res = await fetch(`${worker.url}/admin/api/runtime`, { headers: { Authorization: `Bearer ${E2E_OPERATOR_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      kind: "swarm",
      api_version: expect.stringMatching(/^\d+\.\d+$/),
      problems: [],
      // A fresh control plane: no reconciler run yet, nothing waiting to be retired.
      reconciler: { last_run: null, last_engine_run: null },
      retire_ledger: { length: 0 },
    });
  });

  it("refuses a first deploy no machine can take, with a sentence and no charge", async () => {
    const repo = await cgiRepository(`swarm-${Date.now() % 100000}`);
    app = await session.call<AppJson>("POST", "/console/api/apps", { name: "Swarm", repository: repo, subdomain: `swarm-${Date.now() % 100000}` });
    await creditAccount(worker.url, email, 10_000);
    await session.call("PUT", `/console/api/apps/${app.id}/env`, { version: 0, variables: [{ key: "GREETING", value: SECRETS[0] }] });
    for (const id of [managerId, workerId]) await manager("node", "update", "--availability", "pause", id);
    try {
      const refused = await press(app.id, "deploy").then(() => "deployed", (err: Error) => err.message);
      expect(refused).toMatch(/answered 503: .*"code":"INSUFFICIENT_CAPACITY"/);
      expect(refused).toContain("The app cannot be placed: no machine of the cluster is ready to take new apps. No charge was made.");
    } finally {
      for (const id of [managerId, workerId]) await manager("node", "update", "--availability", "active", id);
    }
    expect((await wallet()).balance).toBe(10_000);
    expect((await getApp(app.id)).status).toBe("not_deployed");
  });

  it("builds on the manager, the worker pulls it through the registry, and the Worker serves it by Host", async () => {
    const live = await deployAndWait(app.id);
    expect(live).toMatchObject({ status: "running", latest_deploy: { status: "live" } });
    expect(await curlApp(app.subdomain, "/cgi-bin/env")).toEqual({ status: 200, body: `GREETING=${SECRETS[0]}` });
    const { nodes } = await placement(app.id);
    expect(nodes).toHaveLength(1);
    // The task runs on the worker, which never built anything: it pulled the image by digest.
    expect(nodes).toEqual([workerId]);
    const pulled = await docker(s.workerSock!, "images", "--digests", "--format", "{{.Repository}}@{{.Digest}}");
    expect(pulled).toContain(`${s.registry}/control-plane/app-${app.id}@sha256:`);
  });

  it("a variable change is a service update no request of a loop sees fail", async () => {
    const { service } = await placement(app.id);
    const seen = new Set<string>();
    const failures: string[] = [];
    let looping = true;
    const loop = (async () => {
      while (looping) {
        const res = await curlApp(app.subdomain, "/cgi-bin/env").catch((err: Error) => ({ status: 0, body: err.message }));
        if (res.status !== 200 || !SECRETS.some((v) => res.body === `GREETING=${v}`)) failures.push(`${res.status} ${res.body.slice(0, 200)}`);
        else seen.add(res.body);
      }
    })();
    try {
      await until("the loop's first answer", async () => seen.size > 0 || failures.length > 0, 10_000);
      await session.call("PUT", `/console/api/apps/${app.id}/env`, { version: 1, variables: [{ key: "GREETING", value: SECRETS[1] }] });
      await until("the new variables to be applied", async () => {
        const now = await getApp(app.id);
        return !now.env.applying && now.env.applied_version === 2;
      }, 120_000);
      // Requests keep flowing while the old task stops.
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      looping = false;
      await loop;
    }
    expect(failures).toEqual([]);
    expect([...seen].sort()).toEqual([`GREETING=${SECRETS[0]}`, `GREETING=${SECRETS[1]}`]);
    // The same service, updated in place: one running task.
    const after = await placement(app.id);
    expect(after.service).toBe(service);
    expect(after.nodes).toHaveLength(1);
  });

  it("a deploy whose new generation does not answer is reverted: the previous one serves again", async () => {
    const { service } = await placement(app.id);
    await commitFiles(forgeRoot, "acme", repoName, cgiFiles("127.0.0.1"), { modes: MODES });
    const failed = await deployAndWait(app.id);
    expect(failed).toMatchObject({ status: "running", latest_deploy: { status: "failed", failure: { kind: "probe_failed" } } });
    await until("the previous generation to answer again", async () => {
      const res = await curlApp(app.subdomain, "/cgi-bin/env");
      return res.status === 200 && res.body === `GREETING=${SECRETS[1]}`;
    }, 30_000);
    expect((await placement(app.id)).service).toBe(service);
    await commitFiles(forgeRoot, "acme", repoName, cgiFiles(), { modes: MODES });
  });

  it("after the worker is drained Swarm runs the app on the manager and the proxy follows within seconds", async () => {
    await manager("node", "update", "--label-add", "apps=on", managerId);
    const started = Date.now();
    await manager("node", "update", "--availability", "drain", workerId);
    try {
      await until("the task on the manager", async () => (await placement(app.id)).nodes.includes(managerId), 60_000);
      const moved = Date.now();
      let last = "";
      await until("the proxy to answer from the manager", async () => {
        const res = await curlApp(app.subdomain, "/cgi-bin/env");
        last = `${res.status} ${res.body.slice(0, 300)}`;
        return res.status === 200 && res.body === `GREETING=${SECRETS[1]}`;
      }, 10_000).catch(async (error: Error) => {
        const service = (await placement(app.id)).service;
        const tasks = [
          await manager("service", "inspect", service, "--format", "{{json .Spec.TaskTemplate.ContainerSpec.Image}} {{json .Spec.EndpointSpec.Ports}} {{json .UpdateStatus}}"),
          await manager("service", "ps", "--no-trunc", "--format", "{{.Image}} {{.DesiredState}} {{.CurrentState}} {{.Error}} {{.Ports}}", service),
        ].join("\n");
        throw new Error(`${error.message}; last answer: ${last}; service and tasks:\n${tasks}`);
      });
      // The proxy followed within seconds of Swarm running the task on the manager.
      expect(Date.now() - moved).toBeLessThan(10_000);
      expect(Date.now() - started).toBeLessThan(60_000);
      // Every request from now on is answered.
      for (let i = 0; i < 20; i++) expect(await curlApp(app.subdomain, "/cgi-bin/env")).toEqual({ status: 200, body: `GREETING=${SECRETS[1]}` });
    } finally {
      await manager("node", "update", "--availability", "active", workerId);
    }
  });

  it("Restart is a forced update, Stop scales to 0 and Start to 1, Delete removes the service", async () => {
    const { service } = await placement(app.id);
    const forceBefore = Number(await manager("service", "inspect", service, "--format", "{{.Spec.TaskTemplate.ForceUpdate}}"));
    await press(app.id, "restart");
    expect(Number(await manager("service", "inspect", service, "--format", "{{.Spec.TaskTemplate.ForceUpdate}}"))).toBe(forceBefore + 1);
    await until("the restarted app to answer", async () => (await curlApp(app.subdomain, "/cgi-bin/env")).status === 200, 20_000);

    const balance = (await wallet()).balance;
    await press(app.id, "stop");
    expect(await manager("service", "inspect", service, "--format", "{{.Spec.Mode.Replicated.Replicas}}")).toBe("0");
    expect((await curlApp(app.subdomain)).status).toBe(503);
    await press(app.id, "start");
    expect(await manager("service", "inspect", service, "--format", "{{.Spec.Mode.Replicated.Replicas}}")).toBe("1");
    expect(await curlApp(app.subdomain, "/cgi-bin/env")).toEqual({ status: 200, body: `GREETING=${SECRETS[1]}` });
    expect((await wallet()).balance).toBe(balance);

    await session.call("DELETE", `/console/api/apps/${app.id}`);
    expect(await manager("service", "ls", "-q", "--filter", `label=control-plane.app_id=${app.id}`)).toBe("");
    expect(await manager("images", "-q", `${s.registry}/control-plane/app-${app.id}`)).toBe("");
  });
});
