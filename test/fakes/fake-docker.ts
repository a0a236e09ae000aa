/**
 * A fake Docker Engine for tests: a Node HTTP server answering exactly the part of the Engine
 * API that `src/runtime/docker.ts` uses, at the same versioned paths with the same JSON shapes,
 * the same JSON-lines build stream and the same multiplexed log frames. It passes the same
 * conformance suite as the real engine (`test/e2e/runtime-fake.test.ts`).
 *
 * Images are the context's files plus the parsed Dockerfile (`fake-docker-build.ts`: RUN `false`
 * fails its step, RUN `sleep N` holds the build N seconds). Instances are real HTTP servers on
 * 127.0.0.1 random ports (`fake-docker-instance.ts`: busybox httpd and echo conventions).
 */
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import { logFrame } from "../../src/runtime/docker-stream";
import { BuildRefused, type FakeImage, prepareBuild, runSteps } from "./fake-docker-build";
import { type LogLine, type PublishedPort, planProcess, publish } from "./fake-docker-instance";

/** The API version the fake reports on `/_ping` and the only one it accepts in paths. */
export const FAKE_API_VERSION = "1.43";

interface FakeContainer {
  id: string;
  name: string;
  image: FakeImage;
  imageRef: string;
  env: string[];
  labels: Record<string, string>;
  exposed: string;
  hostIp: string;
  hostPort: number;
  memory: number;
  memorySwap: number;
  nanoCpus: number;
  /** The rest of HostConfig as sent (PidsLimit, CapDrop, SecurityOpt, Init, LogConfig, RestartPolicy, NetworkMode...). */
  hostConfig: Record<string, unknown>;
  running: boolean;
  exitCode: number;
  /** Whether it ever ran (Docker's FinishedAt is zero until then). */
  finished: boolean;
  restarts: number;
  createdAt: string;
  logs: TimedLine[];
  /** Open `logs?follow=1` calls: each gets every line printed from now on; `null` ends them (removed). */
  followers: Set<(line: TimedLine | null) => void>;
  published?: PublishedPort;
}

/** A line of output and when it was printed (ms since the epoch). */
type TimedLine = LogLine & { at: number };

/** What a test can see of an instance. */
export interface FakeContainerView {
  id: string;
  name: string;
  image: string;
  running: boolean;
  env: Record<string, string>;
  labels: Record<string, string>;
  memory: number;
  nanoCpus: number;
  /** `http://127.0.0.1:<port>` while running. */
  url: string | null;
}

/** What a test can see of an image. */
export interface FakeImageView {
  id: string;
  tags: string[];
  files: string[];
  exposedPorts: string[];
  cmd: string[];
}

export interface FakeDocker {
  /** The engine's API base, `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
  containers(): FakeContainerView[];
  images(): FakeImageView[];
  /** Makes a running instance print lines (as its process would), e.g. to test followers. */
  print(id: string, text: string, stream?: 1 | 2): void;
}

/** Starts the fake. `unref`: do not keep the Node process alive (e.g. when started by vitest's config). */
/** An address that takes connections and never answers: an engine that hangs. */
export async function startSilentEngine(options: { unref?: boolean } = {}): Promise<{ url: string }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  if (options.unref) server.unref();
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}` };
}

export async function startFakeDocker(options: { unref?: boolean } = {}): Promise<FakeDocker> {
  const engine = new FakeEngine(options.unref === true);
  const server = createServer((req, res) => {
    engine.handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, { message: error instanceof Error ? error.message : String(error) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  if (options.unref) server.unref();
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await engine.stopAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    containers: () => engine.containerViews(),
    images: () => engine.imageViews(),
    print: (id, text, stream = 1) => engine.print(id, text, stream),
  };
}

class FakeEngine {
  private readonly images = new Map<string, FakeImage>();
  private readonly containers = new Map<string, FakeContainer>();
  private readonly networks = new Map<string, { id: string; labels: Record<string, string>; created: string }>();
  /** When each image was last tagged (Docker's `Created`, Unix seconds), by image id. */
  private readonly imageCreated = new Map<string, number>();

  constructor(private readonly unref: boolean) {}

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://fake");
    const method = req.method ?? "GET";
    if (url.pathname === "/_ping") {
      res.writeHead(200, { "Api-Version": FAKE_API_VERSION, "Content-Type": "text/plain" });
      return void res.end(method === "HEAD" ? undefined : "OK");
    }
    // Not the engine's API: lets tests (also those inside workerd) make an instance print lines.
    const printing = /^\/fake\/containers\/([^/]+)\/print$/.exec(url.pathname);
    if (method === "POST" && printing) {
      const body = JSON.parse(await readText(req)) as { text: string; stream?: 1 | 2 };
      return this.print(decodeURIComponent(printing[1]!), body.text, body.stream ?? 1) ? send(res, 204) : send(res, 404, { message: "No such container" });
    }
    const following = /^\/fake\/containers\/([^/]+)\/followers$/.exec(url.pathname);
    if (method === "GET" && following) return send(res, 200, { count: this.container(decodeURIComponent(following[1]!))?.followers.size ?? 0 });
    const versioned = /^\/v([\d.]+)(\/.*)$/.exec(url.pathname);
    if (!versioned || versioned[1] !== FAKE_API_VERSION) {
      return send(res, 400, { message: `the fake engine only serves /v${FAKE_API_VERSION}/ paths, not ${url.pathname}` });
    }
    const path = versioned[2]!;
    const q = url.searchParams;
    let m: RegExpExecArray | null;
    if (method === "POST" && path === "/build") return this.build(req, res, q);
    if (method === "GET" && path === "/containers/json") return send(res, 200, this.listContainers(q));
    if (method === "GET" && path === "/images/json") return send(res, 200, this.listImages(q));
    if (method === "POST" && path === "/containers/create") return this.create(res, q.get("name") ?? "", JSON.parse(await readText(req)));
    if (method === "GET" && path === "/networks") return send(res, 200, this.listNetworks(q));
    if (method === "POST" && path === "/networks/create") return this.createNetwork(res, JSON.parse(await readText(req)));
    if ((m = /^\/networks\/([^/]+)$/.exec(path))) return this.network(res, method, decodeURIComponent(m[1]!));
    if ((m = /^\/containers\/([^/]+)\/(start|stop|restart|json|logs|stats)$/.exec(path))) {
      const c = this.container(decodeURIComponent(m[1]!));
      if (!c) return send(res, 404, { message: `No such container: ${decodeURIComponent(m[1]!)}` });
      if (m[2] === "json") return send(res, 200, this.inspectJson(c));
      if (m[2] === "stats") return send(res, 200, statsJson(c.running));
      if (m[2] === "logs") return this.logs(req, res, c, q);
      if (m[2] === "start" && c.running) return send(res, 304);
      if (m[2] === "stop" && !c.running) return send(res, 304);
      if (m[2] !== "start") await this.halt(c);
      if (m[2] !== "stop") {
        // A start or restart by hand resets the restart count, as Docker's does.
        c.restarts = 0;
        try {
          await this.run(c);
        } catch (error) {
          return send(res, 500, { message: `driver failed programming external connectivity on endpoint ${c.name}: ${error instanceof Error ? error.message : String(error)}` });
        }
      }
      return send(res, 204);
    }
    if (method === "DELETE" && (m = /^\/containers\/([^/]+)$/.exec(path))) {
      const c = this.container(decodeURIComponent(m[1]!));
      if (!c) return send(res, 404, { message: `No such container: ${decodeURIComponent(m[1]!)}` });
      if (c.running && q.get("force") !== "1" && q.get("force") !== "true") {
        return send(res, 409, { message: `You cannot remove a running container ${c.id}. Stop the container before attempting removal or force remove` });
      }
      await this.halt(c);
      this.containers.delete(c.id);
      return send(res, 204);
    }
    if ((m = /^\/images\/(.+?)(\/json)?$/.exec(path))) {
      const ref = decodeURIComponent(m[1]!);
      const image = this.image(ref);
      if (!image) return send(res, 404, { message: `No such image: ${ref}` });
      if (method === "GET" && m[2]) return send(res, 200, { Id: image.id, RepoTags: image.tags, Config: { ExposedPorts: Object.fromEntries(image.exposedPorts.map((p) => [p, {}])), Cmd: image.cmd, Env: envList(image.env) } });
      if (method === "DELETE" && !m[2]) return send(res, 200, this.removeImage(ref, image));
    }
    return send(res, 404, { message: "page not found" });
  }

  private async build(req: IncomingMessage, res: ServerResponse, q: URLSearchParams): Promise<void> {
    const context = await readBytes(req);
    const tag = normalizeRef(q.get("t") ?? "");
    let prepared: ReturnType<typeof prepareBuild>;
    try {
      prepared = prepareBuild(context, q.get("dockerfile") || "Dockerfile");
    } catch (error) {
      if (error instanceof BuildRefused) return send(res, error.status, { message: error.message });
      throw error;
    }
    res.writeHead(200, { "Content-Type": "application/json" });
    // As Docker's builder: a client that goes away cancels the build, and nothing is tagged.
    let cancelled = false;
    res.on("close", () => {
      if (!res.writableFinished) cancelled = true;
    });
    const steps = runSteps(prepared.files, prepared.steps, tag, (ref) => this.image(ref));
    for (;;) {
      const next = await steps.next();
      if (cancelled) return;
      if (next.done) {
        if (next.value) this.tag(next.value, tag);
        break;
      }
      res.write(`${JSON.stringify(next.value)}\n`);
    }
    res.end();
  }

  private create(res: ServerResponse, name: string, body: CreateBody): void {
    const image = this.image(body.Image ?? "");
    if (!image) return send(res, 404, { message: `No such image: ${body.Image}` });
    const taken = [...this.containers.values()].find((c) => c.name === name);
    if (taken) {
      return send(res, 409, { message: `Conflict. The container name "/${name}" is already in use by container "${taken.id}". You have to remove (or rename) that container to be able to reuse that name.` });
    }
    const exposed = Object.keys(body.ExposedPorts ?? {})[0] ?? image.exposedPorts[0] ?? "";
    const { Memory, MemorySwap, NanoCpus, PortBindings, ...hostConfig } = body.HostConfig ?? {};
    const networkMode = typeof hostConfig.NetworkMode === "string" ? hostConfig.NetworkMode : "bridge";
    if (!["bridge", "default"].includes(networkMode) && !this.networks.has(networkMode)) return send(res, 404, { message: `network ${networkMode} not found` });
    const c: FakeContainer = {
      id: randomHex(64),
      name: name || `fake_${randomHex(8)}`,
      image,
      imageRef: body.Image ?? "",
      // Docker merges the image's ENV under the container's and adds PATH when neither sets it.
      env: envList({ PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...image.env, ...parseEnv(body.Env ?? []) }),
      labels: { ...image.labels, ...(body.Labels ?? {}) },
      exposed,
      hostIp: PortBindings?.[exposed]?.[0]?.HostIp ?? "0.0.0.0",
      hostPort: Number(PortBindings?.[exposed]?.[0]?.HostPort || 0),
      memory: Memory ?? 0,
      memorySwap: MemorySwap ?? 0,
      nanoCpus: NanoCpus ?? 0,
      hostConfig: { ...hostConfig, NetworkMode: networkMode },
      running: false,
      exitCode: 0,
      finished: false,
      restarts: 0,
      createdAt: new Date().toISOString(),
      logs: [],
      followers: new Set(),
    };
    this.containers.set(c.id, c);
    send(res, 201, { Id: c.id, Warnings: [] });
  }

  /**
   * Runs the process. One that exits non-zero under an `on-failure` policy is restarted at once
   * until the policy's count is spent (the fake has no clock for Docker's growing delays).
   */
  private async run(c: FakeContainer): Promise<void> {
    const env = parseEnv(c.env);
    const plan = planProcess([...c.image.entrypoint, ...c.image.cmd], env);
    const policy = c.hostConfig.RestartPolicy as { Name?: string; MaximumRetryCount?: number } | undefined;
    const retries = policy?.Name === "on-failure" && plan.exitCode !== 0 && !plan.httpd ? (policy.MaximumRetryCount ?? 0) : 0;
    for (let i = 0; i <= retries; i++) for (const line of plan.logs) this.append(c, line);
    c.restarts += retries;
    c.exitCode = plan.exitCode;
    if (!plan.httpd) {
      c.finished = true;
      return;
    }
    const taken = [...this.containers.values()].some((other) => other !== c && other.running && c.hostPort > 0 && other.published?.port === c.hostPort);
    if (taken) throw new Error(`Bind for 127.0.0.1:${c.hostPort} failed: port is already allocated`);
    c.published = await publish(plan, parseInt(c.exposed, 10), c.image.files, env, this.unref, c.hostPort);
    c.running = true;
  }

  private async halt(c: FakeContainer): Promise<void> {
    // The engine ends `follow` calls when the process stops.
    for (const follower of c.followers) follower(null);
    if (c.running) c.finished = true;
    c.running = false;
    await c.published?.close();
    c.published = undefined;
  }

  private append(c: FakeContainer, line: LogLine): void {
    const timed = { ...line, at: Date.now() };
    c.logs.push(timed);
    for (const follower of c.followers) follower(timed);
  }

  /** Lines printed by an instance; false when there is no such instance. */
  print(key: string, text: string, stream: 1 | 2): boolean {
    const c = this.container(key);
    if (!c) return false;
    for (const line of text.split("\n")) this.append(c, { stream, text: `${line}\n` });
    return true;
  }

  /** `tail`, `since` (seconds, with a fraction), `timestamps` and `follow`, as the engine reads them. */
  private logs(req: IncomingMessage, res: ServerResponse, c: FakeContainer, q: URLSearchParams): void {
    const tail = q.get("tail");
    const count = tail && tail !== "all" ? Number(tail) : Infinity;
    const since = q.get("since") ? Number(q.get("since")) * 1000 : 0;
    const timestamps = q.get("timestamps") === "1" || q.get("timestamps") === "true";
    const after = c.logs.filter((line) => line.at >= since);
    const lines = count === Infinity ? after : count > 0 ? after.slice(-count) : [];
    const frame = (line: TimedLine) => {
      const stamp = timestamps ? `${new Date(line.at).toISOString().replace("Z", "000000Z")} ` : "";
      return logFrame(line.stream, new TextEncoder().encode(`${stamp}${line.text}`));
    };
    res.writeHead(200, { "Content-Type": "application/vnd.docker.raw-stream" });
    // The engine answers at once, even when no line is there yet.
    res.flushHeaders();
    for (const line of lines) res.write(frame(line));
    if (q.get("follow") !== "1" && q.get("follow") !== "true") return void res.end();
    const follower = (line: TimedLine | null) => {
      if (line) res.write(frame(line));
      else res.end();
    };
    c.followers.add(follower);
    const done = () => c.followers.delete(follower);
    req.on("close", done);
    res.on("close", done);
  }

  private inspectJson(c: FakeContainer): unknown {
    const ports = c.running && c.published && c.exposed ? { [c.exposed]: [{ HostIp: c.hostIp, HostPort: String(c.published.port) }] } : {};
    return {
      Id: c.id,
      Name: `/${c.name}`,
      Image: c.image.id,
      Created: c.createdAt,
      RestartCount: c.restarts,
      State: {
        Status: c.running ? "running" : c.finished ? "exited" : "created",
        Running: c.running,
        Restarting: false,
        OOMKilled: false,
        ExitCode: c.running ? 0 : c.exitCode,
        FinishedAt: c.finished ? new Date().toISOString() : "0001-01-01T00:00:00Z",
      },
      Config: { Image: c.imageRef, Env: c.env, Labels: c.labels, ExposedPorts: c.exposed ? { [c.exposed]: {} } : {}, Tty: false, Cmd: c.image.cmd },
      HostConfig: {
        ...c.hostConfig,
        Memory: c.memory,
        MemorySwap: c.memorySwap,
        NanoCpus: c.nanoCpus,
        PortBindings: c.exposed ? { [c.exposed]: [{ HostIp: c.hostIp, HostPort: c.hostPort > 0 ? String(c.hostPort) : "" }] } : {},
      },
      NetworkSettings: { Ports: ports },
    };
  }

  /** `POST /networks/create`: 409 for a name that exists, as Docker with `CheckDuplicate`. */
  private createNetwork(res: ServerResponse, body: { Name?: string; Labels?: Record<string, string> }): void {
    const name = body.Name ?? "";
    if (this.networks.has(name)) return send(res, 409, { message: `network with name ${name} already exists` });
    const id = randomHex(64);
    this.networks.set(name, { id, labels: body.Labels ?? {}, created: new Date().toISOString() });
    send(res, 201, { Id: id, Warning: "" });
  }

  /** `GET` and `DELETE /networks/{name}`; a network with instances attached cannot be removed (403). */
  private network(res: ServerResponse, method: string, name: string): void {
    const network = this.networks.get(name);
    if (!network) return send(res, 404, { message: `network ${name} not found` });
    if (method === "GET") return send(res, 200, { Name: name, Id: network.id, Driver: "bridge", Internal: false, Labels: network.labels });
    if (method !== "DELETE") return send(res, 404, { message: "page not found" });
    const attached = [...this.containers.values()].filter((c) => c.running && c.hostConfig.NetworkMode === name);
    if (attached.length > 0) return send(res, 403, { message: `error while removing network: network ${name} id ${network.id} has active endpoints` });
    this.networks.delete(name);
    send(res, 204);
  }

  /** `GET /networks`; `filters` by `name`, matching part of the name as Docker does. */
  private listNetworks(q: URLSearchParams): unknown[] {
    const names = (JSON.parse(q.get("filters") || "{}") as { name?: string[] }).name ?? [];
    return [...this.networks.entries()]
      .filter(([name]) => names.length === 0 || names.some((n) => name.includes(n)))
      .map(([name, n]) => ({ Name: name, Id: n.id, Created: n.created, Driver: "bridge", Labels: n.labels }));
  }

  /** `GET /containers/json`: running ones, or all with `all=1`; `filters` by `label` (`k=v` or `k`). */
  private listContainers(q: URLSearchParams): unknown[] {
    const labels = (JSON.parse(q.get("filters") || "{}") as { label?: string[] }).label ?? [];
    const all = q.get("all") === "1" || q.get("all") === "true";
    return [...this.containers.values()]
      .filter((c) => (all || c.running) && labels.every((l) => (l.includes("=") ? c.labels[l.slice(0, l.indexOf("="))] === l.slice(l.indexOf("=") + 1) : l in c.labels)))
      .map((c) => ({ Id: c.id, Names: [`/${c.name}`], Image: c.imageRef, Labels: c.labels, State: c.running ? "running" : "exited", Created: Math.floor(Date.parse(c.createdAt) / 1000), ...(q.get("size") === "1" ? { SizeRw: 0 } : {}) }));
  }

  /** `GET /images/json`; `filters` by `reference`: a name matches every tag of it, `name:tag` that tag. */
  private listImages(q: URLSearchParams): unknown[] {
    const references = (JSON.parse(q.get("filters") || "{}") as { reference?: string[] }).reference ?? [];
    const matches = (tag: string) => references.some((r) => r === tag || r === tag.slice(0, tag.lastIndexOf(":")));
    return [...new Set(this.images.values())]
      .filter((i) => references.length === 0 || i.tags.some(matches))
      .map((i) => ({ Id: i.id, RepoTags: [...i.tags], Created: this.imageCreated.get(i.id) ?? Math.floor(Date.now() / 1000) }));
  }

  private removeImage(ref: string, image: FakeImage): unknown[] {
    const byId = ref.startsWith("sha256:") || image.id.slice(7).startsWith(ref);
    const untagged = byId ? image.tags : [normalizeRef(ref)];
    image.tags = image.tags.filter((t) => !untagged.includes(t));
    for (const t of untagged) this.images.delete(t);
    if (image.tags.length > 0) return untagged.map((t) => ({ Untagged: t }));
    return [...untagged.map((t) => ({ Untagged: t })), { Deleted: image.id }];
  }

  private tag(image: FakeImage, tag: string): void {
    const previous = this.images.get(tag);
    if (previous) previous.tags = previous.tags.filter((t) => t !== tag);
    image.tags = [tag];
    this.images.set(tag, image);
    this.imageCreated.set(image.id, Math.floor(Date.now() / 1000));
  }

  /** By tag, by `sha256:` id, or by id prefix, as Docker resolves references. */
  private image(ref: string): FakeImage | undefined {
    const tagged = this.images.get(normalizeRef(ref));
    if (tagged) return tagged;
    const id = ref.replace(/^sha256:/, "");
    if (id.length < 12) return undefined;
    return [...new Set(this.images.values())].find((i) => i.id.slice(7).startsWith(id));
  }

  /** By id, id prefix (12+ characters) or name. */
  private container(key: string): FakeContainer | undefined {
    return this.containers.get(key) ?? [...this.containers.values()].find((c) => c.name === key || (key.length >= 12 && c.id.startsWith(key)));
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.containers.values()].map((c) => this.halt(c)));
  }

  containerViews(): FakeContainerView[] {
    return [...this.containers.values()].map((c) => ({
      id: c.id,
      name: c.name,
      image: c.imageRef,
      running: c.running,
      env: parseEnv(c.env),
      labels: c.labels,
      memory: c.memory,
      nanoCpus: c.nanoCpus,
      url: c.running && c.published ? `http://127.0.0.1:${c.published.port}` : null,
    }));
  }

  imageViews(): FakeImageView[] {
    return [...new Set(this.images.values())].map((i) => ({ id: i.id, tags: [...i.tags], files: [...i.files.keys()], exposedPorts: i.exposedPorts, cmd: i.cmd }));
  }
}

interface CreateBody {
  Image?: string;
  Env?: string[];
  Labels?: Record<string, string>;
  ExposedPorts?: Record<string, unknown>;
  HostConfig?: { PortBindings?: Record<string, { HostIp?: string; HostPort?: string }[]>; Memory?: number; MemorySwap?: number; NanoCpus?: number; [key: string]: unknown };
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) return void res.writeHead(status).end();
  res.writeHead(status, { "Content-Type": "application/json" }).end(`${JSON.stringify(body)}\n`);
}

async function readBytes(req: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

async function readText(req: IncomingMessage): Promise<string> {
  return new TextDecoder().decode(await readBytes(req));
}

/** `name` means `name:latest`, as in Docker. */
function normalizeRef(ref: string): string {
  return ref && !/:[^/]+$/.test(ref) && !ref.startsWith("sha256:") ? `${ref}:latest` : ref;
}

function parseEnv(list: string[]): Record<string, string> {
  // An entry without `=` unsets the variable in Docker; it contributes nothing here.
  return Object.fromEntries(list.filter((kv) => kv.includes("=")).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
}

function envList(env: Record<string, string>): string[] {
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

function randomHex(length: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(length / 2)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * `GET /containers/{id}/stats?stream=false` as the engine answers it (cgroup v2 spelling): a running
 * stand-in uses 4 MiB and a tenth of one of two CPUs over the engine's one-second sample; a stopped
 * one reads zero, as Docker's does.
 */
function statsJson(running: boolean): unknown {
  const system = 2_000_000_000;
  return {
    cpu_stats: { cpu_usage: { total_usage: running ? 200_000_000 : 0 }, system_cpu_usage: 2 * system, online_cpus: running ? 2 : 0 },
    precpu_stats: { cpu_usage: { total_usage: running ? 100_000_000 : 0 }, system_cpu_usage: running ? system : 0 },
    memory_stats: running ? { usage: 4 * 1024 * 1024 + 65536, stats: { inactive_file: 65536 } } : {},
  };
}
