/**
 * What `npm start` sets up for apps: the container engine the Worker reaches (a RUNTIME_URL given
 * in `.dev.vars`, else the machine's dockerd through a localhost forwarder) and a dev forge
 * serving local git repositories, with a sample repository to deploy.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_DEV_DNS_PORT, startDevDns } from "../dev-dns";
import { DEFAULT_DEV_FORGE_PORT, createRepository, startDevForge } from "../dev-forge";
import { WRITTEN_BY_NPM_START, readDevVar } from "./dev-server";
import { DEFAULT_DOCKER_SOCKET, dockerSocketAvailable, startDockerForwarder } from "./docker-forwarder";

/** Lines `npm start` writes itself end with this, so the next start replaces them. */
const MARK = WRITTEN_BY_NPM_START;

export interface LocalEngine {
  /** The engine address the Worker gets, or "" when there is none. */
  url: string;
  /** One line for the banner: whether app deploys are available, and why not. */
  status: string;
  close(): Promise<void>;
}

function readVars(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n") : [];
}

/** Replaces npm start's own line for `name` in `.dev.vars` with the value of this run. */
function writeMarkedVar(path: string, name: string, value: string): void {
  const kept = readVars(path).filter((l) => !(l.startsWith(`${name}=`) && l.endsWith(MARK)));
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop();
  writeFileSync(path, [...kept, `${name}="${value}" ${MARK}`, ""].join("\n"), { mode: 0o600 });
}

export async function setUpLocalEngine(devVarsPath: string, socketPath = DEFAULT_DOCKER_SOCKET): Promise<LocalEngine> {
  const given = readDevVar("RUNTIME_URL", devVarsPath);
  if (given !== undefined) {
    return { url: given, status: given ? `App deploys: on the engine at ${given} (RUNTIME_URL in .dev.vars)` : "App deploys: off (RUNTIME_URL is empty in .dev.vars)", close: async () => undefined };
  }
  if (!(await dockerSocketAvailable(socketPath))) {
    writeMarkedVar(devVarsPath, "RUNTIME_URL", "");
    return {
      url: "",
      status: `App deploys: off. No Docker engine at ${socketPath}: install docker.io and start dockerd, or set RUNTIME_URL in .dev.vars.`,
      close: async () => undefined,
    };
  }
  const forwarder = await startDockerForwarder({ socketPath });
  writeMarkedVar(devVarsPath, "RUNTIME_URL", forwarder.url);
  return { url: forwarder.url, status: `App deploys: on the machine's dockerd (${socketPath}, forwarded at ${forwarder.url})`, close: forwarder.close };
}

/** A small app the sample repository holds: busybox httpd in a FROM scratch image (no registry needed). */
function sampleApp(busybox: Buffer): Record<string, string | Uint8Array> {
  return {
    Dockerfile: [
      "# Serves www/ with busybox httpd; the first EXPOSE line gives the port the platform probes.",
      "FROM scratch",
      "COPY busybox /bin/busybox",
      "COPY www /www",
      "EXPOSE 8080",
      'CMD ["/bin/busybox", "httpd", "-f", "-v", "-p", "0.0.0.0:8080", "-h", "/www"]',
      "",
    ].join("\n"),
    busybox,
    "www/index.html": "<!doctype html><title>Hello</title><h1>Hello from the sample app</h1>\n",
  };
}

export interface LocalForge {
  url: string;
  root: string;
  /** The sample repository's URL, when busybox was there to build it. */
  sample: string | null;
  close(): Promise<void>;
}

/** Starts the dev forge over `<root>/<owner>/<repo>` and adds the sample repository once. */
export async function setUpLocalForge(root: string, port = DEFAULT_DEV_FORGE_PORT): Promise<LocalForge> {
  mkdirSync(root, { recursive: true });
  const forge = await startDevForge({ root, port });
  let sample: string | null = null;
  if (existsSync(join(root, "demo", "hello"))) sample = `${forge.url}/demo/hello`;
  else if (existsSync("/bin/busybox")) {
    await createRepository(root, "demo", "hello", sampleApp(readFileSync("/bin/busybox")), { modes: { busybox: 0o755 }, forgeUrl: forge.url });
    sample = `${forge.url}/demo/hello`;
  }
  return { url: forge.url, root, sample, close: forge.close };
}

export interface LocalDns {
  /** The resolver address the Worker gets. */
  resolverUrl: string;
  /** One line for the banner. */
  status: string;
  close(): Promise<void>;
}

/**
 * Custom domains check DNS over HTTPS: unless `.dev.vars` names a resolver, npm start runs the
 * DoH stand-in (scripts/dev-dns.ts) with its records in `recordsFile`, so a custom domain can be
 * taken through Pending DNS, Verifying… and Active on this machine.
 */
export async function setUpLocalDns(devVarsPath: string, recordsFile: string, port = DEFAULT_DEV_DNS_PORT): Promise<LocalDns> {
  const url = readDevVar("DNS_RESOLVER_URL", devVarsPath);
  if (url) {
    return { resolverUrl: url, status: `Custom domains: DNS from ${url} (DNS_RESOLVER_URL in .dev.vars)`, close: async () => undefined };
  }
  if (!existsSync(recordsFile)) writeFileSync(recordsFile, `${JSON.stringify({ "shop.example.test": [] }, null, 2)}\n`);
  const dns = await startDevDns({ port, file: recordsFile });
  writeMarkedVar(devVarsPath, "DNS_RESOLVER_URL", dns.resolverUrl);
  return {
    resolverUrl: dns.resolverUrl,
    status: `Custom domains: DNS from the DoH stand-in at ${dns.resolverUrl}; records in ${recordsFile} (or PUT ${dns.url}/records/<name>)`,
    close: dns.close,
  };
}
