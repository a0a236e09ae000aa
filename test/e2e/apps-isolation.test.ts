/**
 * App isolation end to end: tenants who share the machine's real dockerd, each deploying busybox
 * apps through a real `wrangler dev`. One tenant's container cannot reach another's, whether by
 * the container's address or through the host on its published port; a fork loop stops at the
 * plan's process limit while the engine and other apps keep answering; and an app whose process
 * exits non-zero by itself keeps its host port while the engine restarts it, its hostname never
 * serving another container.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepository } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, BUSYBOX, curlApp, deployAndWait, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";
import { localD1Rows } from "./harness";

/** Ports of this stack's instances: a short range of its own, so holding a port is visible. */
const FIRST_PORT = 21000 + Math.floor(Math.random() * 800) * 10;
const RANGE_SIZE = 8;

let stack: AppsStack;
let alice: ConsoleSession;
let bob: ConsoleSession;
const sessions: ConsoleSession[] = [];

beforeAll(async () => {
  stack = await startAppsStack({ INSTANCE_PORT_RANGE: `${FIRST_PORT}-${FIRST_PORT + RANGE_SIZE - 1}` });
  alice = await signedUp(stack.worker.url);
  bob = await signedUp(stack.worker.url);
  sessions.push(alice, bob);
});

afterAll(async () => {
  for (const session of sessions) {
    const { apps } = await session.call<{ apps: AppJson[] }>("GET", "/console/api/apps").catch(() => ({ apps: [] as AppJson[] }));
    for (const app of apps) await session.call("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  }
  await stack?.stop();
});

const sh = (lines: string[]) => ["#!/bin/busybox sh", ...lines, ""].join("\n");
const CGI_HEADER = "printf 'Content-Type: text/plain\\r\\n\\r\\n'";

/** An httpd app with CGI scripts: `fetch?<host:port/path>` runs wget from inside the container. */
function proberApp(page: string, extraCgi: Record<string, string> = {}, cmd?: string): { files: Record<string, string | Uint8Array>; modes: Record<string, number> } {
  const cgi: Record<string, string> = {
    fetch: sh([CGI_HEADER, 'exec 2>&1', '/bin/busybox timeout 5 /bin/busybox wget -q -O - "http://$QUERY_STRING"', 'echo "exit=$?"']),
    ...extraCgi,
  };
  const run = cmd ?? "/bin/busybox httpd -f -p 0.0.0.0:8080 -h /www";
  const files: Record<string, string | Uint8Array> = {
    Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "sh", "-c", ${JSON.stringify(run)}]\n`,
    busybox: BUSYBOX,
    "www/index.html": page,
    ...Object.fromEntries(Object.entries(cgi).map(([name, body]) => [`www/cgi-bin/${name}`, body])),
  };
  const modes = Object.fromEntries(Object.keys(files).filter((p) => p === "busybox" || p.startsWith("www/cgi-bin/")).map((p) => [p, 0o755]));
  return { files, modes };
}

async function deployed(session: ConsoleSession, name: string, app: { files: Record<string, string | Uint8Array>; modes: Record<string, number> }): Promise<AppJson> {
  const slug = `${name}-${Date.now() % 100000}`;
  const repo = await createRepository(stack.forgeRoot, "acme", slug, app.files, { branch: "main", modes: app.modes, forgeUrl: stack.forgeUrl });
  const created = await session.call<AppJson>("POST", "/console/api/apps", { name, repository: repo, subdomain: slug });
  const live = await deployAndWait(session, created.id);
  expect(live.latest_deploy, JSON.stringify(live.latest_deploy)).toMatchObject({ status: "live" });
  return live;
}

interface ContainerJson {
  Id: string;
  HostConfig: { PidsLimit: number; PortBindings: Record<string, { HostIp: string; HostPort: string }[]> };
  NetworkSettings: { Networks: Record<string, { IPAddress: string; Gateway: string }> };
}

/** The app's serving container as the engine shows it (`docker inspect`). */
async function containerOf(app: AppJson): Promise<ContainerJson & { ip: string; gateway: string; hostPort: number; network: string }> {
  const list = (await (await fetch(`${stack.engineUrl}/containers/json?filters=${encodeURIComponent(JSON.stringify({ label: [`control-plane.app_id=${app.id}`] }))}`)).json()) as { Id: string }[];
  expect(list).toHaveLength(1);
  const c = (await (await fetch(`${stack.engineUrl}/containers/${list[0]!.Id}/json`)).json()) as ContainerJson;
  const [network, settings] = Object.entries(c.NetworkSettings.Networks)[0]!;
  const binding = Object.values(c.HostConfig.PortBindings)[0]![0]!;
  expect(binding.HostIp).toBe("127.0.0.1");
  return { ...c, ip: settings.IPAddress, gateway: settings.Gateway, hostPort: Number(binding.HostPort), network };
}

interface InstanceJson {
  state: string;
  restarts: number;
  exit_code: number | null;
  oom_killed: boolean;
  output?: string;
}

const fetchFrom = (app: AppJson, target: string) => curlApp(stack, app.subdomain, `/cgi-bin/fetch?${target}`);

describe("tenants sharing one engine", () => {
  let a: AppJson;
  let b: AppJson;

  it("each app gets its own network and a port from the range, published on loopback only", async () => {
    a = await deployed(alice, "tenant-a", proberApp("tenant-a-page"));
    b = await deployed(bob, "tenant-b", proberApp("tenant-b-page"));
    const [ca, cb] = [await containerOf(a), await containerOf(b)];
    expect(ca.network).toBe(`control-plane-app-${a.id}`);
    expect(cb.network).toBe(`control-plane-app-${b.id}`);
    for (const port of [ca.hostPort, cb.hostPort]) {
      expect(port).toBeGreaterThanOrEqual(FIRST_PORT);
      expect(port).toBeLessThan(FIRST_PORT + RANGE_SIZE);
    }
    const rows = await localD1Rows(stack.worker.persistTo, "SELECT app_id, port, instance_id FROM instance_ports ORDER BY port");
    expect(rows).toEqual(expect.arrayContaining([[a.id, String(ca.hostPort), ca.Id], [b.id, String(cb.hostPort), cb.Id]]));
  }, 240_000);

  it("a tenant's wget reaches its own container but not another tenant's, by address or through the host gateway", async () => {
    const [ca, cb] = [await containerOf(a), await containerOf(b)];
    const self = await fetchFrom(a, "127.0.0.1:8080/");
    expect(self).toMatchObject({ status: 200 });
    expect(self.body).toContain("tenant-a-page");
    expect(self.body).toContain("exit=0");

    const byAddress = await fetchFrom(a, `${cb.ip}:8080/`);
    expect(byAddress.body).not.toContain("tenant-b-page");
    expect(byAddress.body).toMatch(/exit=[1-9]/);

    for (const gateway of [ca.gateway, cb.gateway, "172.17.0.1"]) {
      const viaHost = await fetchFrom(a, `${gateway}:${cb.hostPort}/`);
      expect(viaHost.body).not.toContain("tenant-b-page");
      expect(viaHost.body).toMatch(/exit=[1-9]/);
    }
    // And the other way round.
    const back = await fetchFrom(b, `${ca.ip}:8080/`);
    expect(back.body).not.toContain("tenant-a-page");
    expect(back.body).toMatch(/exit=[1-9]/);
  }, 60_000);

  it("a fork loop stops at the plan's process limit; the engine and the other apps keep answering", async () => {
    const forker = await deployed(
      alice,
      "forker",
      proberApp("forker-page", {
        forkloop: sh([CGI_HEADER, "exec 2>&1", "i=0", "while [ $i -lt 2000 ]; do /bin/busybox sleep 20 </dev/null >/dev/null 2>&1 & i=$((i+1)); done", 'echo "forked all $i"']),
      }),
    );
    const c = await containerOf(forker);
    expect(c.HostConfig.PidsLimit).toBe(128);
    const started = Date.now();
    const reply = await curlApp(stack, forker.subdomain, "/cgi-bin/forkloop");
    expect(reply.body).not.toContain("forked all 2000");
    expect(reply.body).toMatch(/can't fork|Resource temporarily unavailable/);
    const stats = (await (await fetch(`${stack.engineUrl}/containers/${c.Id}/stats?stream=false`)).json()) as { pids_stats: { current: number } };
    expect(stats.pids_stats.current).toBeLessThanOrEqual(128);
    // Within the sleepers' 20 s: the engine, the Worker and the other tenants still answer.
    expect((await fetch(`${stack.engineUrl}/_ping`)).status).toBe(200);
    expect(await curlApp(stack, a.subdomain)).toEqual({ status: 200, body: "tenant-a-page" });
    expect(await curlApp(stack, b.subdomain)).toEqual({ status: 200, body: "tenant-b-page" });
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 240_000);
});

describe("an app whose process exits non-zero by itself", () => {
  const loop = [
    "/bin/busybox rm -f /www/crash-now",
    "/bin/busybox httpd -f -p 0.0.0.0:8080 -h /www &",
    "while [ ! -e /www/crash-now ] && [ ! -e /www/crash-always ]; do /bin/busybox sleep 0.2; done",
    "echo crashing on purpose >&2",
    "exit 3",
  ].join("\n");
  // The reply is written before the crash is scheduled, and the crash comes half a second
  // later: otherwise the loop could see the file and end the container (and the httpd inside
  // it) before the reply reached the client.
  const later = (command: string) => `(/bin/busybox sleep 0.5; ${command}) </dev/null >/dev/null 2>&1 &`;
  const crasher = () =>
    proberApp("crasher-page", {
      crash: sh([CGI_HEADER, "echo crash scheduled", later("/bin/busybox touch /www/crash-now")]),
      "crash-always": sh([CGI_HEADER, "echo crash scheduled for good", later("/bin/busybox touch /www/crash-always")]),
    }, loop);

  it("keeps its port while the engine restarts it; the hostname never serves another app, and it answers again", async () => {
    const app = await deployed(alice, "crasher", crasher());
    const before = await containerOf(app);
    const seen = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const r = await curlApp(stack, app.subdomain).catch(() => ({ status: 0, body: "" }));
        seen.add(r.status === 200 ? r.body : `status ${r.status}`);
      }
    })();
    try {
      expect((await curlApp(stack, app.subdomain, "/cgi-bin/crash")).body).toContain("crash scheduled");
      // Another tenant deploys while the crashed app is being restarted: it gets another port.
      const other = await deployed(bob, "newcomer", proberApp("newcomer-page"));
      const theirs = await containerOf(other);
      expect(theirs.hostPort).not.toBe(before.hostPort);
      let view: AppJson & { instance: InstanceJson | null };
      const deadline = Date.now() + 30_000;
      do {
        view = await alice.call("GET", `/console/api/apps/${app.id}`);
        if (view.instance?.state === "running" && view.instance.restarts >= 1) break;
        await new Promise((r) => setTimeout(r, 300));
      } while (Date.now() < deadline);
      expect(view.instance).toEqual({ state: "running", restarts: 1, exit_code: null, oom_killed: false });
      expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "crasher-page" });
      const after = await containerOf(app);
      expect(after.Id).toBe(before.Id);
      expect(after.hostPort).toBe(before.hostPort);
    } finally {
      watching = false;
      await watcher;
    }
    expect([...seen].filter((body) => !body.startsWith("status "))).toEqual(["crasher-page"]);
  }, 240_000);

  it("shows Crashed with its exit code and last output after the engine gave up, and its port stays held", async () => {
    const { apps } = await alice.call<{ apps: AppJson[] }>("GET", "/console/api/apps");
    const app = apps.find((x) => x.subdomain.startsWith("crasher-"))!;
    const port = (await containerOf(app)).hostPort;
    expect((await curlApp(stack, app.subdomain, "/cgi-bin/crash-always")).body).toContain("crash scheduled for good");
    let instance = null as InstanceJson | null;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      instance = (await alice.call<{ instance: InstanceJson | null }>("GET", `/console/api/apps/${app.id}`)).instance;
      if (instance?.state === "crashed") break;
      await new Promise((r) => setTimeout(r, 200));
    }

    expect(instance).toMatchObject({ state: "crashed", exit_code: 3, oom_killed: false });
    expect(instance!.restarts).toBeGreaterThanOrEqual(5);
    expect(instance!.output).toContain("crashing on purpose");
    // The app page says so too: Crashed, the exit code and the last output.
    const html = await alice.page(`/console/apps/${app.id}`);
    expect(html).toContain('data-instance-state="crashed"');
    expect(html).toContain("Exit code 3.");
    expect(html).toContain("crashing on purpose");
    expect((await curlApp(stack, app.subdomain)).body).not.toContain("page");
    const rows = await localD1Rows(stack.worker.persistTo, `SELECT port FROM instance_ports WHERE app_id = '${app.id}'`);
    expect(rows).toEqual([[String(port)]]);
  }, 120_000);
});
