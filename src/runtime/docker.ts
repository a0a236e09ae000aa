/**
 * The runtime contract (`types.ts`) on the Docker Engine HTTP API: images through `DockerImages`
 * (docker-images.ts), one container per instance with the settings of `settings.ts`, each app on
 * its own bridge network, the app's port published on the host port the control plane allocated
 * (ports.ts). A new generation is a new container beside the old one (`replace`), which the
 * switch's retire row removes later. Runs in workerd and in Node.
 */
import type { BuilderChoice } from "./docker-build";
import { DockerEngineClient } from "./docker-client";
import { DockerImages } from "./docker-images";
import { containerLogLines, containerLogs } from "./docker-logs";
import { checkEgress } from "./egress-probe";
import { instanceHostConfig } from "./instance-settings";
import { listContainers, listNetworks } from "./listing";
import { type DockerStatsJson, readDockerStats } from "./stats";
import { BUILD_NETWORK, tenantNetworkSpec } from "./tenant-network";
import {
  type BuildSpec,
  type ContainerRuntime,
  type Instance,
  type InstanceAddress,
  type InstanceRunState,
  type InstanceSpec,
  type InstanceState,
  type InstanceStats,
  type ListedInstance,
  type ListedObject,
  type LogOptions,
  InstanceExitedError,
  PortTakenError,
  RuntimeUnavailableError,
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
  private readonly builder: DockerImages;
  private readonly publishHost: string;
  private readonly engine: string;
  private readonly stopTimeout: string;
  private readonly hostIp: string;

  constructor(options: DockerRuntimeOptions) {
    this.client = new DockerEngineClient(options.url, options.fetch);
    this.builder = new DockerImages(this.client, options.url, options.builder ?? "auto", () => this.ensureNetwork(BUILD_NETWORK, {}));
    this.publishHost = options.publishHost ?? new URL(options.url).hostname;
    this.engine = engineId("docker", options.url);
    this.stopTimeout = String(options.stopTimeoutSeconds ?? 10);
    this.hostIp = options.bindAddress ?? defaultBindAddress(this.publishHost);
  }

  build = (spec: BuildSpec) => this.builder.build(spec);
  hasImage = (image: string) => this.builder.hasImage(image);
  imageDigest = (image: string) => this.builder.imageDigest(image);
  removeImage = (image: string) => this.builder.removeImage(image);
  images = (repository: string) => this.builder.images(repository);
  listImages = (prefix: string) => this.builder.listImages(prefix);

  async ping(): Promise<{ apiVersion: string }> {
    return { apiVersion: await this.client.ping() };
  }

  /** The start-up report: whether tenant code reaches the engine's host (checked by effect, `checkEgress`). */
  async report(): Promise<string[]> {
    return checkEgress(this.client, () => this.ensureNetwork(BUILD_NETWORK, {}));
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

  /** A new container beside `previous`, which keeps serving until the switch's retire row removes it. */
  replace(_previous: string | null, spec: InstanceSpec): Promise<Instance> {
    return this.start(spec);
  }

  /** Removes the new container; `previous` never stopped. */
  async revert(id: string, previous: string | null): Promise<void> {
    if (id !== previous) await this.remove(id);
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

  async remove(id: string, options: { graceSeconds?: number } = {}): Promise<void> {
    // SIGTERM (passed on by the instance's init) and the grace period, then the kill of a forced removal.
    if (options.graceSeconds) await this.drain(this.client.request("POST", `/containers/${seg(id)}/stop`, { query: { t: String(options.graceSeconds) }, accept: [304, 404] }));
    await this.drain(this.client.request("DELETE", `/containers/${seg(id)}`, { query: { force: "1", v: "1" }, accept: [404] }));
  }

  /** `GET /containers/json?size=1`: `SizeRw` is the writable layer's size (the engine walks it, so this is slow). */
  async writableBytes(label: string): Promise<{ id: string; bytes: number }[]> {
    const filters = JSON.stringify({ label: [label], status: ["running"] });
    const { body } = await this.client.json<{ Id: string; SizeRw?: number }[]>("GET", "/containers/json", { query: { size: "1", filters }, untimed: true });
    return body.map((c) => ({ id: c.Id, bytes: c.SizeRw ?? 0 }));
  }

  /** One engine reserves no memory ahead: the plan's limit is the kernel's when the instance runs. */
  async capacity(_memoryBytes: number): Promise<{ fits: true }> {
    return { fits: true };
  }

  async instances(labels: Record<string, string>): Promise<string[]> {
    const filters = JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
    const { body } = await this.client.json<{ Id: string }[]>("GET", "/containers/json", { query: { all: "1", filters } });
    return body.map((c) => c.Id);
  }

  listInstances(label: { key: string; value?: string }): Promise<ListedInstance[]> {
    return listContainers(this.client, label);
  }

  listNetworks(prefix: string): Promise<ListedObject[]> {
    return listNetworks(this.client, prefix);
  }

  async stats(id: string): Promise<InstanceStats | null> {
    const c = await this.container(id);
    if (!c) return null;
    return containerStats(this.client, c.Id, c.RestartCount ?? 0);
  }

  logs(id: string, options: { tail?: number } = {}): Promise<string> {
    return containerLogs(this.client, id, options);
  }

  logLines(id: string, options: LogOptions = {}) {
    return containerLogLines(this.client, id, options);
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

/**
 * One stats reading of a container (`GET /containers/{id}/stats?stream=false`): the engine samples
 * twice, a second apart, so the CPU figure covers that second. Null when the container is gone.
 */
export async function containerStats(client: DockerEngineClient, containerId: string, restartCount: number): Promise<InstanceStats | null> {
  const { status, body } = await client.json<DockerStatsJson>("GET", `/containers/${seg(containerId)}/stats`, { query: { stream: "false" }, accept: [404] });
  return status === 404 ? null : readDockerStats(body, restartCount);
}

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

function hostForUrl(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
