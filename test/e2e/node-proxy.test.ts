/**
 * The local half of the route to a cluster machine: Caddy with deploy/node-proxy/Caddyfile (as each
 * node runs it behind cloudflared) in front of test upstreams. It refuses a request without the
 * Access service token, passes one with it to the instance port it names, never to a port outside
 * the instance range, never hands the token to the app, and serves the Engine API only where told.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { type IncomingHttpHeaders, type Server, createServer } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CADDYFILE = new URL("../../deploy/node-proxy/Caddyfile", import.meta.url).pathname;
const ID = "0123456789abcdef.access";
const SECRET = "fedcba9876543210fedcba9876543210";
const token = { "CF-Access-Client-Id": ID, "CF-Access-Client-Secret": SECRET };

interface Upstream {
  port: number;
  seen: IncomingHttpHeaders[];
  server: Server;
}

async function upstream(name: string): Promise<Upstream> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.end(`${name} ${req.method} ${req.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, seen, server };
}

async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Proxy {
  url: string;
  stop(): Promise<void>;
}

/** Runs Caddy on the Caddyfile with these settings, until it answers. */
async function caddy(env: Record<string, string>): Promise<Proxy> {
  const home = await mkdtemp(join(tmpdir(), "cp-node-proxy-"));
  const port = await freePort();
  const child: ChildProcess = spawn("caddy", ["run", "--config", CADDYFILE, "--adapter", "caddyfile"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home, CP_PROXY_PORT: String(port), ...env } as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr?.on("data", (chunk) => (log += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`caddy exited: ${log}`);
    if (await fetch(url).then(() => true, () => false)) break;
    if (Date.now() > deadline) throw new Error(`caddy did not answer: ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      await rm(home, { recursive: true, force: true });
    },
  };
}

describe("node proxy (Caddy)", () => {
  let app: Upstream;
  let other: Upstream;
  let engine: Upstream;
  let manager: Proxy;
  let worker: Proxy;
  let unconfigured: Proxy;

  beforeAll(async () => {
    [app, other, engine] = await Promise.all([upstream("app"), upstream("other"), upstream("engine")]);
    // The instance range is exactly the app's port: the other upstreams lie outside it.
    const range = { CP_INSTANCE_PORT_MIN: String(app.port), CP_INSTANCE_PORT_MAX: String(app.port) };
    const secrets = { CP_ACCESS_CLIENT_ID: ID, CP_ACCESS_CLIENT_SECRET: SECRET };
    [manager, worker, unconfigured] = await Promise.all([
      caddy({ ...secrets, ...range, CP_ENGINE: "on", CP_ENGINE_UPSTREAM: `127.0.0.1:${engine.port}` }),
      caddy({ ...secrets, ...range, CP_ENGINE_UPSTREAM: `127.0.0.1:${engine.port}` }),
      caddy({ ...range, CP_ENGINE: "on", CP_ENGINE_UPSTREAM: `127.0.0.1:${engine.port}` }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([manager, worker, unconfigured].map((p) => p?.stop()));
    for (const u of [app, other, engine]) u?.server.close();
  });

  const hits = () => app.seen.length + other.seen.length + engine.seen.length;

  it("refuses a request without the service token, or with a wrong one, before any upstream", async () => {
    const before = hits();
    const attempts: Record<string, string>[] = [
      { "X-Instance-Port": String(app.port) },
      { ...token, "CF-Access-Client-Secret": `${SECRET}x`, "X-Instance-Port": String(app.port) },
      { "CF-Access-Client-Id": ID, "X-Instance-Port": String(app.port) },
      { "CF-Access-Client-Secret": SECRET },
      {},
    ];
    for (const headers of attempts) {
      const res = await fetch(`${manager.url}/`, { headers });
      expect(res.status).toBe(403);
      await res.arrayBuffer();
    }
    expect(hits()).toBe(before);
  });

  it("passes one with the token to the instance port it names, without the token or routing headers", async () => {
    const res = await fetch(`${manager.url}/some/path?q=1`, { headers: { ...token, "X-Instance-Port": String(app.port), "X-Other": "kept" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("app GET /some/path?q=1");
    const seen = app.seen.at(-1)!;
    expect(seen["x-other"]).toBe("kept");
    expect(seen["cf-access-client-id"]).toBeUndefined();
    expect(seen["cf-access-client-secret"]).toBeUndefined();
    expect(seen["x-instance-port"]).toBeUndefined();
  });

  it("never passes a port outside the instance range, however the header is written", async () => {
    const before = hits();
    const p = app.port;
    for (const value of [String(other.port), String(engine.port), "2375", "22", "65536", "99999999", `0${p}`, `+${p}`, ` ${p}x`, `${p},${other.port}`, `${p}/../`, `127.0.0.1:${p}`, `${p}@127.0.0.1:${other.port}`, "-1"]) {
      const res = await fetch(`${manager.url}/`, { headers: { ...token, "X-Instance-Port": value } });
      expect(res.status, `X-Instance-Port: ${value}`).toBe(403);
      await res.arrayBuffer();
    }
    // Two headers naming the app's port and another one: refused too.
    const twice = new Headers(token);
    twice.append("X-Instance-Port", String(p));
    twice.append("X-Instance-Port", String(other.port));
    expect((await fetch(`${manager.url}/`, { headers: twice })).status).toBe(403);
    expect(hits()).toBe(before);
    expect(other.seen).toHaveLength(0);
  });

  it("serves the Engine API on the manager only, without the token", async () => {
    const res = await fetch(`${manager.url}/v1.41/_ping`, { headers: token });
    expect(await res.text()).toBe("engine GET /v1.41/_ping");
    expect(engine.seen.at(-1)?.["cf-access-client-secret"]).toBeUndefined();
    const before = engine.seen.length;
    const onWorker = await fetch(`${worker.url}/v1.41/_ping`, { headers: token });
    expect(onWorker.status).toBe(404);
    expect(engine.seen.length).toBe(before);
    // The worker's proxy still routes to its instances.
    expect(await (await fetch(`${worker.url}/`, { headers: { ...token, "X-Instance-Port": String(app.port) } })).text()).toBe("app GET /");
  });

  it("refuses everything when the service token is not configured (fails closed)", async () => {
    const before = hits();
    const attempts: Record<string, string>[] = [{}, { "CF-Access-Client-Id": "", "CF-Access-Client-Secret": "" }, token, { ...token, "X-Instance-Port": String(app.port) }];
    for (const headers of attempts) {
      const res = await fetch(`${unconfigured.url}/v1.41/_ping`, { headers });
      expect(res.status).toBe(403);
      await res.arrayBuffer();
    }
    expect(hits()).toBe(before);
  });
});
