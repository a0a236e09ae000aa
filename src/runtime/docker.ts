/**
 * `ContainerRuntime` on the Docker Engine HTTP API (legacy JSON-lines builder, one container per
 * instance with the settings of `settings.ts`, each app on its own bridge network, the app's port
 * published on the host port the control plane allocated). Runs in workerd and in Node.
 */
import { followBuildWithinDisk } from "./build-disk";
import { type Builder, type BuilderChoice, buildQuery, chooseBuilder, progressFor, repositoryOf, supportsBuildKit } from "./docker-build";
import { DockerEngineClient, engineMessage } from "./docker-client";
import { LogStreamDecoder, demultiplexLogs } from "./docker-stream";
import { instanceHostConfig } from "./instance-settings";
import { checkEgress } from "./egress-probe";
import { BUILD_NETWORK, tenantNetworkSpec } from "./tenant-network";
import { type DockerStatsJson, type InstanceStats, readDockerStats } from "./stats";
import { listContainers, listImages, listNetworks } from "./listing";
import {
  type BuildOutcome,
  type BuildSpec,
  type ContainerRuntime,
  type Instance,
  type InstanceRunState,
  type InstanceSpec,
  type InstanceState,
  type LogLine,
  type LogOptions,
  InstanceExitedError,
  PortTakenError,
  RuntimeUnavailableError,
  type InstanceAddress,
  type ListedInstance,
  type ListedObject,
  engineId,
} from "./types";

export interface DockerRuntimeOptions {
  /** Docker Engine API base, e.g. `http://127.0.0.1:2375`. */
  url: string;
  fetch?: typeof fetch;
  /** Host on which published ports are reached; default the hostname of `url`. */
  publishHost?: string;
  /** Grace period before stop and restart kill the process; Docker's own default is 10 s. */
  stopTimeoutSeconds?: number;
  /**
   * Host address published ports are bound to: the one the Worker reaches them at. Default: the
   * loopback address when `publishHost` is loopback, `publishHost` itself when it is an IP
   * address, otherwise 127.0.0.1 (never every interface).
   */
  bindAddress?: string;
  /** RUNTIME_BUILDER: `auto` (default), `buildkit` or `classic` (docker-build.ts). */
  builder?: BuilderChoice;
}

/** The subset of `GET /containers/{id}/json` read here. */
interface ContainerJson {
  Id: string;
  Created?: string;
  RestartCount?: number;
  State?: { Status?: InstanceRunState["status"]; Running?: boolean; Restarting?: boolean; ExitCode?: number; OOMKilled?: boolean; FinishedAt?: string };
  Config?: { Image?: string };
  NetworkSettings?: { Ports?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null };
}

/** The Docker Engine adapter; every method maps to one or two engine calls. */
export class DockerRuntime implements ContainerRuntime {
  private readonly client: DockerEngineClient;
  private readonly publishHost: string;
  private readonly engine: string;
  private readonly stopTimeout: string;
  private readonly hostIp: string;
  private readonly builderChoice: BuilderChoice;
  private readonly engineUrl: string;

  constructor(options: DockerRuntimeOptions) {
    this.client = new DockerEngineClient(options.url, options.fetch);
    this.publishHost = options.publishHost ?? new URL(options.url).hostname;
    this.engine = engineId("docker", options.url);
    this.stopTimeout = String(options.stopTimeoutSeconds ?? 10);
    this.hostIp = options.bindAddress ?? defaultBindAddress(this.publishHost);
    this.builderChoice = options.builder ?? "auto";
    this.engineUrl = options.url;
  }

  async ping(): Promise<{ apiVersion: string }> {
    return { apiVersion: await this.client.ping() };
  }

  /** The start-up report: whether tenant code reaches the engine's host (checked by effect, `checkEgress`). */
  async report(): Promise<string[]> {
    return checkEgress(this.client, () => this.ensureNetwork(BUILD_NETWORK, {}));
  }

  async build(spec: BuildSpec): Promise<BuildOutcome> {
    const deadline = new AbortController();
    const timeoutSeconds = spec.timeoutSeconds;
    const timer = timeoutSeconds === undefined ? null : setTimeout(() => deadline.abort(new BuildTimeout(timeoutSeconds)), timeoutSeconds * 1000);
    try {
      return await this.runBuild(spec, spec.signal ? AbortSignal.any([deadline.signal, spec.signal]) : deadline.signal);
    } catch (error) {
      // Ending the call is what cancels the build: the engine stops the running step and
      // removes its container (forcerm) when the client goes away.
      if (deadline.signal.aborted) return { ok: false, error: (deadline.signal.reason as BuildTimeout).message, timedOut: true };
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw error;
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async runBuild(spec: BuildSpec, signal: AbortSignal): Promise<BuildOutcome> {
    const builder = await this.builderFor(spec);
    const ownImages = builder === "classic" && spec.cacheScope ? await this.images(repositoryOf(spec.tag)) : [];
    // The classic builder runs each step on the build network, under the same egress rules as apps.
    if (builder === "classic") await this.ensureNetwork(BUILD_NETWORK, {});
    const res = await this.client.request("POST", "/build", {
      query: { ...buildQuery(builder, spec, ownImages), ...(builder === "classic" ? { networkmode: BUILD_NETWORK } : {}) },
      stream: spec.context,
      contentType: "application/x-tar",
      // Docker answers 400 (Dockerfile parse error) and 500 (`Cannot locate specified
      // Dockerfile`) for problems in the app's context: those are build outcomes, not outages.
      accept: [400, 500],
      untimed: true,
      signal,
    });
    if (!res.ok) {
      const error = await engineMessage(res);
      await spec.onOutput?.(`${error}\n`);
      return { ok: false, error };
    }
    const { progress, exceeded } = await followBuildWithinDisk(this.client, res, progressFor(builder), builder === "classic" ? spec.diskBytes : undefined, spec.onOutput);
    if (exceeded) return { ok: false, error: exceeded, diskExceeded: true };
    if (progress.error !== undefined) {
      return { ok: false, error: progress.error, ...(progress.lastStep ? { failedStep: progress.lastStep } : {}) };
    }
    if (!progress.imageId) throw new RuntimeUnavailableError("The container engine ended the build without a result.");
    return { ok: true, image: spec.tag };
  }

  /** The builder for this build; whether the engine has BuildKit is asked once per engine. */
  private async builderFor(spec: BuildSpec): Promise<Builder> {
    if (this.builderChoice === "classic" || chooseBuilder(this.builderChoice, true, spec) === "classic") return "classic";
    let known = BUILDKIT_SUPPORT.get(this.engineUrl);
    if (!known) {
      known = supportsBuildKit(this.client);
      BUILDKIT_SUPPORT.set(this.engineUrl, known);
      // An engine that could not be asked is asked again next time.
      known.catch(() => BUILDKIT_SUPPORT.delete(this.engineUrl));
    }
    return chooseBuilder(this.builderChoice, await known, spec);
  }

  async start(spec: InstanceSpec): Promise<Instance> {
    if (spec.network) await this.ensureNetwork(spec.network, {});
    const created = await this.client.json<{ Id: string }>("POST", "/containers/create", {
      query: { name: spec.name },
      json: {
        Image: spec.image,
        // Exactly the app's variables: the deployment contract sets no PORT.
        Env: Object.entries(spec.env).map(([key, value]) => `${key}=${value}`),
        Labels: spec.labels,
        ExposedPorts: { [`${spec.port}/tcp`]: {} },
        // Without a host port the engine picks a free one; reading it back gives the URL.
        HostConfig: instanceHostConfig(spec.limits, { containerPort: spec.port, hostIp: this.hostIp, hostPort: spec.hostPort ?? 0 }, spec.network),
      },
    });
    const id = created.body.Id;
    try {
      await this.drain(this.client.request("POST", `/containers/${seg(id)}/start`, { accept: [304] }));
    } catch (error) {
      // A container that never started would keep its name taken; the caller cannot retry otherwise.
      await this.remove(id).catch(() => undefined);
      if (spec.hostPort && error instanceof Error && PORT_TAKEN.test(error.message)) throw new PortTakenError(spec.hostPort);
      throw error;
    }
    return this.running(id);
  }

  async state(id: string): Promise<InstanceRunState | null> {
    const c = await this.container(id);
    if (!c) return null;
    // The engine resets the exit code when the process starts again: a running one has none.
    const exited = c.State?.Status !== "running" && c.State?.FinishedAt !== undefined && !c.State.FinishedAt.startsWith("0001-");
    return {
      id: c.Id,
      status: c.State?.Status ?? "created",
      restarts: c.RestartCount ?? 0,
      exitCode: exited ? (c.State?.ExitCode ?? null) : null,
      oomKilled: c.State?.OOMKilled === true,
      createdAt: c.Created ? Date.parse(c.Created) : 0,
    };
  }

  async ensureNetwork(name: string, labels: Record<string, string>): Promise<void> {
    const found = await this.client.request("GET", `/networks/${seg(name)}`, { accept: [404] });
    await found.arrayBuffer();
    if (found.ok) return;
    // A tenant bridge (`cpa-…`, which the host's egress rules match). 409: another launch created it meanwhile.
    await this.drain(this.client.request("POST", "/networks/create", { json: tenantNetworkSpec(name, labels), accept: [409] }));
  }

  async removeNetwork(name: string): Promise<void> {
    await this.drain(this.client.request("DELETE", `/networks/${seg(name)}`, { accept: [404] }));
  }

  async inspect(id: string): Promise<InstanceState | null> {
    const c = await this.container(id);
    if (!c) return null;
    const running = isRunning(c);
    const url = running ? this.urlOf(c) : null;
    return { id: c.Id, running, url, ...(url ? { address: this.addressOf(url) } : {}), image: c.Config?.Image ?? "" };
  }

  async restart(id: string): Promise<Instance> {
    await this.drain(this.client.request("POST", `/containers/${seg(id)}/restart`, { query: { t: this.stopTimeout } }));
    return this.running(id);
  }

  async stop(id: string): Promise<void> {
    // 304: already stopped; 404: gone. Both leave the instance not running, which is the point.
    await this.drain(this.client.request("POST", `/containers/${seg(id)}/stop`, { query: { t: this.stopTimeout }, accept: [304, 404] }));
  }

  async resume(id: string): Promise<Instance> {
    await this.drain(this.client.request("POST", `/containers/${seg(id)}/start`, { accept: [304] }));
    return this.running(id);
  }

  async remove(id: string, options: { graceSeconds?: number } = {}): Promise<void> {
    // SIGTERM (passed on by the instance's init) and the grace period, then the kill of a forced removal.
    if (options.graceSeconds) await this.drain(this.client.request("POST", `/containers/${seg(id)}/stop`, { query: { t: String(options.graceSeconds) }, accept: [304, 404] }));
    await this.drain(this.client.request("DELETE", `/containers/${seg(id)}`, { query: { force: "1", v: "1" }, accept: [404] }));
  }

  async removeImage(image: string): Promise<void> {
    await this.drain(this.client.request("DELETE", `/images/${imagePath(image)}`, { query: { force: "1" }, accept: [404] }));
  }

  /** `GET /containers/json?size=1`: `SizeRw` is the writable layer's size (the engine walks it, so this is slow). */
  async writableBytes(label: string): Promise<{ id: string; bytes: number }[]> {
    const filters = JSON.stringify({ label: [label], status: ["running"] });
    const { body } = await this.client.json<{ Id: string; SizeRw?: number }[]>("GET", "/containers/json", { query: { size: "1", filters }, untimed: true });
    return body.map((c) => ({ id: c.Id, bytes: c.SizeRw ?? 0 }));
  }

  async instances(labels: Record<string, string>): Promise<string[]> {
    const filters = JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
    const { body } = await this.client.json<{ Id: string }[]>("GET", "/containers/json", { query: { all: "1", filters } });
    return body.map((c) => c.Id);
  }

  async images(repository: string): Promise<string[]> {
    // `reference=<name>` matches every tag of that name (and nothing of another name).
    const filters = JSON.stringify({ reference: [repository] });
    const { body } = await this.client.json<{ RepoTags?: string[] | null }[]>("GET", "/images/json", { query: { filters } });
    return body.flatMap((i) => (i.RepoTags ?? []).filter((t) => t.slice(0, t.lastIndexOf(":")) === repository));
  }

  listInstances(label: { key: string; value?: string }): Promise<ListedInstance[]> {
    return listContainers(this.client, label);
  }

  listNetworks(prefix: string): Promise<ListedObject[]> {
    return listNetworks(this.client, prefix);
  }

  listImages(prefix: string): Promise<ListedObject[]> {
    return listImages(this.client, prefix);
  }

  async stats(id: string): Promise<InstanceStats | null> {
    const c = await this.container(id);
    if (!c) return null;
    // One reading: the engine samples twice, a second apart, so the CPU figure covers that second.
    const { status, body } = await this.client.json<DockerStatsJson>("GET", `/containers/${seg(id)}/stats`, { query: { stream: "false" }, accept: [404] });
    return status === 404 ? null : readDockerStats(body, c.RestartCount ?? 0);
  }

  async hasImage(image: string): Promise<boolean> {
    const res = await this.client.request("GET", `/images/${imagePath(image)}/json`, { accept: [404] });
    await res.arrayBuffer();
    return res.ok;
  }

  async imageDigest(image: string): Promise<string | null> {
    const res = await this.client.request("GET", `/images/${imagePath(image)}/json`, { accept: [404] });
    if (!res.ok) return void (await res.arrayBuffer()), null;
    const body = (await res.json()) as { Id?: unknown };
    return typeof body.Id === "string" ? body.Id : null;
  }

  /** A missing instance has no logs: "" rather than an error, as after a delete. */
  async logs(id: string, options: { tail?: number } = {}): Promise<string> {
    const tail = options.tail === undefined ? "all" : String(Math.max(0, Math.floor(options.tail)));
    const res = await this.client.request("GET", `/containers/${seg(id)}/logs`, {
      query: { stdout: "1", stderr: "1", tail },
      accept: [404],
    });
    const body = new Uint8Array(await res.arrayBuffer());
    return res.ok ? demultiplexLogs(body) : "";
  }

  /**
   * `GET /containers/{id}/logs?timestamps=1`, decoded frame by frame as it arrives. Following,
   * the engine call stays open until the instance is removed or `signal` aborts, which ends the
   * call (the engine's connection is not left behind). Read lazily: a slow reader slows the engine's
   * stream, never grows a buffer here.
   */
  async logLines(id: string, options: LogOptions = {}): Promise<AsyncIterable<LogLine> | null> {
    const query: Record<string, string> = { stdout: "1", stderr: "1", timestamps: "1", follow: options.follow ? "1" : "0" };
    if (options.tail !== undefined) query.tail = String(Math.max(0, Math.floor(options.tail)));
    // The engine takes seconds with a fraction: lines at or after this moment.
    if (options.since !== undefined) query.since = (Math.max(0, options.since) / 1000).toFixed(3);
    const res = await this.client.request("GET", `/containers/${seg(id)}/logs`, { query, accept: [404], untimed: options.follow === true, ...(options.signal ? { signal: options.signal } : {}) });
    if (res.status === 404) {
      await res.arrayBuffer();
      return null;
    }
    return decodeLogLines(res, options.signal);
  }

  private async container(id: string): Promise<ContainerJson | null> {
    const { status, body } = await this.client.json<ContainerJson>("GET", `/containers/${seg(id)}/json`, { accept: [404] });
    return status === 404 ? null : body;
  }

  /** Inspects a just-started instance for its URL; a process that already ended has none. */
  private async running(id: string): Promise<Instance> {
    const c = await this.container(id);
    if (!c) throw new RuntimeUnavailableError("The container engine lost an instance it had just started.");
    const url = isRunning(c) ? this.urlOf(c) : null;
    if (!url) throw new InstanceExitedError(c.Id, isRunning(c) ? null : (c.State?.ExitCode ?? null));
    return { id: c.Id, url, address: this.addressOf(url) };
  }

  /** Engine, node and port of a URL `urlOf` gave: the node is the host ports are published on. */
  private addressOf(url: string): InstanceAddress {
    return { engine: this.engine, node: this.publishHost, port: Number(new URL(url).port) };
  }

  private urlOf(c: ContainerJson): string | null {
    for (const bindings of Object.values(c.NetworkSettings?.Ports ?? {})) {
      const hostPort = bindings?.find((b) => b.HostPort)?.HostPort;
      if (hostPort) return `http://${hostForUrl(this.publishHost)}:${hostPort}`;
    }
    return null;
  }

  private async drain(pending: Promise<Response>): Promise<void> {
    await (await pending).arrayBuffer();
  }
}

/** The lines of a logs reply as they arrive; stops reading (and ends the engine call) when the reader stops. */
async function* decodeLogLines(res: Response, signal: AbortSignal | undefined): AsyncGenerator<LogLine> {
  const reader = res.body?.getReader();
  if (!reader) return;
  const decoder = new LogStreamDecoder();
  try {
    for (;;) {
      if (signal?.aborted) return;
      const chunk = await reader.read().catch((error: unknown) => {
        if (signal?.aborted) return { done: true as const, value: undefined };
        throw error;
      });
      if (chunk.done) break;
      yield* decoder.push(chunk.value);
    }
    yield* decoder.flush();
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
class BuildTimeout extends Error {
  constructor(readonly seconds: number) {
    super(`The build did not finish within ${seconds} s.`);
  }
}

/** Per engine URL: whether it runs BuildKit builds (asked at the first build that could use it). */
const BUILDKIT_SUPPORT = new Map<string, Promise<boolean>>();

export { buildLimits } from "./docker-build";

/** The engine's refusal when a requested host port is held by something else. */
const PORT_TAKEN = /port is already allocated|address already in use/i;

/** Running and not between two restarts (Docker reports both as `Running` during the restart delay). */
function isRunning(c: ContainerJson): boolean {
  return c.State?.Running === true && c.State.Restarting !== true;
}

/** Loopback when the Worker reaches instances on this machine, else the address it uses; never every interface. */
export function defaultBindAddress(publishHost: string): string {
  const host = publishHost.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host === "::1" || host.startsWith("127.")) return "127.0.0.1";
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(":")) return host;
  return "127.0.0.1";
}

/** One path segment (a container id or name). */
function seg(value: string): string {
  return encodeURIComponent(value);
}

/** An image reference in a path: `registry/name:tag` keeps its slashes, as the engine routes it. */
function imagePath(image: string): string {
  return image.split("/").map(encodeURIComponent).join("/");
}

function hostForUrl(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
