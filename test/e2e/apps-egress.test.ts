/**
 * No path from tenant code to the host: with the egress rules of scripts/egress-firewall.sh in
 * force (what `npm start` and CI install), a service listening on all of the host's addresses
 * answers the host itself, but neither an app instance (a busybox CGI `wget` inside it) nor a build
 * step (`RUN wget` while the image builds) reaches it, by the network's gateway, the default
 * bridge's address or the host's own address. A bad EGRESS_ALLOW is refused by the script.
 */
import { execFile } from "node:child_process";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepository } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, BUSYBOX, curlApp, deployAndWait, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";
import { E2E_OPERATOR_TOKEN } from "./harness";

const run = promisify(execFile);
const SCRIPT = new URL("../../scripts/egress-firewall.sh", import.meta.url).pathname;
const SECRET = `host-only-${Date.now().toString(36)}`;

let stack: AppsStack;
let session: ConsoleSession;
let server: Server;
let port = 0;
const hits: string[] = [];

/** The host's address on its default route's interface, and the default bridge's: what a container must not reach. */
let hostAddresses: string[] = [];

beforeAll(async () => {
  await run(SCRIPT);
  const device = /\bdev (\S+)/.exec((await run("ip", ["-4", "route", "show", "default"])).stdout)?.[1] ?? "";
  const addresses = [...(await run("ip", ["-4", "-o", "addr", "show"])).stdout.matchAll(/^\d+:\s+(\S+)\s+inet\s+([\d.]+)\//gm)];
  hostAddresses = addresses.filter(([, dev]) => dev === device || dev === "docker0").map(([, , address]) => address!);
  expect(hostAddresses).toHaveLength(2);
  server = createServer((req, res) => {
    hits.push(req.socket.remoteAddress ?? "");
    res.end(SECRET);
  });
  await new Promise<void>((resolve) => server.listen(0, "0.0.0.0", resolve));
  port = (server.address() as AddressInfo).port;
  stack = await startAppsStack();
  session = await signedUp(stack.worker.url);
}, 900_000);

afterAll(async () => {
  const { apps } = session ? await session.call<{ apps: AppJson[] }>("GET", "/console/api/apps").catch(() => ({ apps: [] as AppJson[] })) : { apps: [] as AppJson[] };
  for (const app of apps) await session.call("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  await stack?.stop();
  server?.close();
});

const sh = (lines: string[]) => ["#!/bin/busybox sh", ...lines, ""].join("\n");
/** One `wget` per target, 3 s at most each, as `tried <target>: <what came back>` lines. */
const tries = (targets: string[]) => targets.map((t) => `echo "tried ${t}: $(/bin/busybox timeout 3 /bin/busybox wget -q -O - http://${t}/ 2>&1 | /bin/busybox tr '\\n' ' ')"`);

describe("tenant code and the host", () => {
  it("the host reaches its own service on every address", async () => {
    for (const address of ["127.0.0.1", ...hostAddresses]) expect(await (await fetch(`http://${address}:${port}/`)).text()).toBe(SECRET);
  });

  it("neither a build step nor the instance reaches it: not by the gateway, the default bridge or the host's address", async () => {
    const targets = hostAddresses.map((a) => `${a}:${port}`);
    const seen = hits.length;
    const files = {
      Dockerfile: [
        "FROM scratch",
        "COPY busybox /bin/busybox",
        "COPY www /www",
        // The build step's own network: its gateway is the host too.
        `RUN ["/bin/busybox", "sh", "-c", ${JSON.stringify(`gw=$(/bin/busybox ip route | /bin/busybox awk '/default/ {print $3}'); { ${tries(targets).join("; ")}; ${tries([`$gw:${port}`]).join("")}; } > /www/build.txt 2>&1`)}]`,
        "EXPOSE 8080",
        'CMD ["/bin/busybox", "httpd", "-f", "-p", "0.0.0.0:8080", "-h", "/www"]',
        "",
      ].join("\n"),
      busybox: BUSYBOX,
      "www/index.html": "egress-page",
      "www/cgi-bin/probe": sh(["printf 'Content-Type: text/plain\\r\\n\\r\\n'", 'gw=$(/bin/busybox ip route | /bin/busybox awk \'/default/ {print $3}\')', ...tries(targets), ...tries([`$gw:${port}`])]),
    };
    const name = `egress-${Date.now() % 100000}`;
    const repo = await createRepository(stack.forgeRoot, "acme", name, files, { branch: "main", modes: { busybox: 0o755, "www/cgi-bin/probe": 0o755 }, forgeUrl: stack.forgeUrl });
    const created = await session.call<AppJson>("POST", "/console/api/apps", { name, repository: repo, subdomain: name });
    const live = await deployAndWait(session, created.id, 180_000);
    expect(live.latest_deploy, JSON.stringify(live.latest_deploy)).toMatchObject({ status: "live" });

    const build = await curlApp(stack, name, "/build.txt");
    expect(build.status).toBe(200);
    expect(build.body.match(/^tried /gm)).toHaveLength(targets.length + 1);
    expect(build.body).not.toContain(SECRET);

    const instance = await curlApp(stack, name, "/cgi-bin/probe");
    expect(instance.status).toBe(200);
    expect(instance.body.match(/^tried /gm)).toHaveLength(targets.length + 1);
    expect(instance.body).not.toContain(SECRET);
    // Nothing arrived at the service since the host's own requests.
    expect(hits.slice(seen)).toEqual([]);
  }, 240_000);

  it("the operator's report runs the egress probe on the engine and finds the host blocked", async () => {
    const res = await fetch(`${stack.worker.url}/admin/api/runtime`, { headers: { Authorization: `Bearer ${E2E_OPERATOR_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { problems: string[] }).problems).toEqual([]);
  });

  it("refuses an EGRESS_ALLOW that is not a list of IPv4 ranges", async () => {
    const refused = await run(SCRIPT, [], { env: { ...process.env, EGRESS_ALLOW: "10.0.0.0/8,example.com" } }).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining('EGRESS_ALLOW must be comma-separated IPv4 ranges such as 10.20.0.0/16, got "example.com"') });
  });
});
