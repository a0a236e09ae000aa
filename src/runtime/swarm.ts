/**
 * The runtime contract (`types.ts`) on Docker Swarm: one replicated service per instance. Images
 * are built on the manager and pushed to a registry (swarm-images.ts); services run them by
 * digest. Ports are published in host mode (the ingress mesh needs IPVS) on a port of the instance
 * range chosen per service generation, so the port in a task's labels tells which generation it
 * belongs to (swarm-services.ts). `replace` is a service update in place: Swarm starts the new
 * task before it stops the old one. Runs in workerd and in Node.
 */
import { type CapacityVerdict, swarmCapacity } from "./capacity";
import { DockerEngineClient } from "./docker-client";
import { DockerRuntime } from "./docker";
import { listNetworks, listServices } from "./listing";
import { SwarmImages, registryFetch } from "./swarm-images";
import { swarmReport } from "./swarm-probe";
import {
  DEFAULT_PORT_RANGE,
  type PortRange,
  anyTaskActive,
  appOverlaySpec,
  generationOutcome,
  taskRunState,
} from "./swarm-rules";
import { SwarmServices, sleep } from "./swarm-services";
import { IMAGE_LABEL, type ServiceSettings, publishedPortOf, serviceSpec } from "./swarm-spec";
import { type NodeEngines, nodeEngines, oomKilled, serviceStats } from "./swarm-stats";
import { serviceLogLines, serviceLogs, taskLogs } from "./swarm-streams";
import {
  type BuildSpec,
  type ContainerRuntime,
  type Instance,
  type InstanceRunState,
  type InstanceSpec,
  type InstanceState,
  type InstanceStats,
  type ListedInstance,
  type ListedObject,
  type LogLine,
  type LogOptions,
  RuntimeUnavailableError,
  addressUrl,
  engineId,
} from "./types";

export interface SwarmRuntimeOptions {
  /** The manager's Engine API base. */
  url: string;
  fetch?: typeof fetch;
  /** Registry host (and optional path prefix) images are pushed to, e.g. `registry.example.net/apps`. */
  registry: string;
  /** Registry credentials, sent as `X-Registry-Auth` on push and to the nodes that pull. */
  registryAuth?: { username: string; password: string };
  /**
   * The registry's own API base (`https://registry.example.net`), to delete an image's tag there
   * when the image is removed; absent: the registry keeps its copy.
   */
  registryApi?: string;
  /** Host ports instances publish on; default 20000-29999. */
  portRange?: PortRange;
  /** Grace period between SIGTERM and SIGKILL when a task stops; default 10 s. */
  stopGraceSeconds?: number;
  /** How long a new generation may take to run (image pull included); default 120 s. */
  startTimeoutSeconds?: number;
  /** Placement constraints for every service, e.g. `node.role==worker` (tests pin nodes this way). */
  constraints?: string[];
  /**
   * An image in the registry with `cat`, which the start-up report runs once on every node to
   * check its no-new-privileges option (SWARM_PROBE_IMAGE); absent: the report says it is unchecked.
   */
  probeImage?: string;
  /** Whether apps' overlay networks are encrypted between nodes (SWARM_ENCRYPT_NETWORKS); default true. */
  encryptNetworks?: boolean;
  /**
   * The Engine API base of the node at `address` (SWARM_NODE_ENGINE_URL with `{node}` replaced),
   * for a task's stats and OOM flag there (swarm-stats.ts); absent or null: only the manager's own
   * node is asked.
   */
  nodeEngineUrl?: (address: string) => string | null;
  random?: () => number;
}

const POLL_MS = 250;

export class SwarmRuntime implements ContainerRuntime {
  private readonly client: DockerEngineClient;
  private readonly imageStore: SwarmImages;
  private readonly services: SwarmServices;
  private readonly startTimeoutMs: number;
  private readonly settings: ServiceSettings;
  private readonly probeImage: string | undefined;
  private readonly encryptNetworks: boolean;
  private readonly nodeEngine: NodeEngines;

  constructor(options: SwarmRuntimeOptions) {
    const registry = options.registry.replace(/\/+$/, "");
    const fetcher = registryFetch(options.fetch ?? ((input, init) => fetch(input, init)), registry, options.registryAuth);
    this.client = new DockerEngineClient(options.url, fetcher);
    const local = new DockerRuntime({ url: options.url, fetch: fetcher, stopTimeoutSeconds: options.stopGraceSeconds });
    const registryApi = options.registryApi ? { url: options.registryApi, ...(options.registryAuth ? { auth: options.registryAuth } : {}) } : undefined;
    this.imageStore = new SwarmImages(this.client, local, registry, registryApi);
    this.startTimeoutMs = (options.startTimeoutSeconds ?? 120) * 1000;
    this.services = new SwarmServices({ client: this.client, engine: engineId("swarm", options.url), range: options.portRange ?? DEFAULT_PORT_RANGE, startTimeoutMs: this.startTimeoutMs, random: options.random ?? Math.random });
    this.settings = { graceSeconds: options.stopGraceSeconds ?? 10, constraints: options.constraints ?? [] };
    this.probeImage = options.probeImage || undefined;
    this.encryptNetworks = options.encryptNetworks ?? true;
    this.nodeEngine = nodeEngines(this.client, this.services, options.nodeEngineUrl, options.fetch ?? ((input, init) => fetch(input, init)));
  }

  build = (spec: BuildSpec) => this.imageStore.build(spec);
  hasImage = (image: string) => this.imageStore.hasImage(image);
  imageDigest = (image: string) => this.imageStore.imageDigest(image);
  removeImage = (image: string) => this.imageStore.removeImage(image);
  images = (repository: string) => this.imageStore.images(repository);
  listImages = (prefix: string) => this.imageStore.listImages(prefix);

  async ping(): Promise<{ apiVersion: string }> {
    const apiVersion = await this.client.ping();
    const { body } = await this.client.json<{ Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } }>("GET", "/info");
    if (body.Swarm?.LocalNodeState !== "active" || !body.Swarm.ControlAvailable) {
      throw new RuntimeUnavailableError("The container engine is not a Docker Swarm manager (RUNTIME_KIND=swarm needs one).");
    }
    return { apiVersion };
  }

  /** The start-up report (swarm-probe.ts, `swarmReport`); [] when nothing is to fix. */
  report(): Promise<string[]> {
    return swarmReport({ client: this.client, image: this.probeImage, readTaskLogs: (taskId) => taskLogs(this.client, taskId), timeoutMs: this.startTimeoutMs, pollMs: POLL_MS });
  }

  async start(spec: InstanceSpec): Promise<Instance> {
    if (spec.network) await this.ensureNetwork(spec.network, {});
    const port = await this.services.freePort();
    const { body } = await this.client.json<{ ID: string }>("POST", "/services/create", { json: await this.specOf(spec, port) });
    return this.services.awaitGeneration(body.ID, port);
  }

  /**
   * A service update of `previous` to `spec` (image, variables, limits, health check, one replica)
   * on a new port: Swarm starts the new task before it stops the old one (start-first) and rolls the
   * update back when the new task fails. Resolves once the new generation runs and Swarm has
   * finished the update. No `previous` (or one that is gone): a new service, as by `start`.
   */
  async replace(previous: string | null, spec: InstanceSpec): Promise<Instance> {
    const service = previous === null ? null : await this.services.service(previous);
    if (!service) return this.start(spec);
    if (spec.network) await this.ensureNetwork(spec.network, {});
    const port = await this.services.freePort();
    const next = await this.specOf(spec, port);
    // A service keeps its name; the restart counter goes on from where it is.
    next.Name = service.Spec.Name;
    if (service.Spec.TaskTemplate.ForceUpdate !== undefined) next.TaskTemplate.ForceUpdate = service.Spec.TaskTemplate.ForceUpdate;
    service.Spec = next;
    await this.services.write(service);
    return this.services.converged(service, await this.services.awaitGeneration(service.ID, port));
  }

  /**
   * A new service (`id !== previous`) is removed. The service updated in place goes back to its spec
   * before the last update (stopped when it was stopped), as a new generation on a fresh port (the
   * previous generation's port may still be held by its task on the node), unless Swarm's own
   * rollback already did that; waits until it runs again.
   */
  async revert(id: string, previous: string | null): Promise<void> {
    if (id !== previous) return this.remove(id);
    const service = await this.services.service(id);
    if (!service) return;
    const before = service.PreviousSpec;
    if (service.UpdateStatus?.State?.startsWith("rollback") || !before) {
      const port = publishedPortOf(service.Spec);
      if (service.Spec.Mode.Replicated.Replicas > 0 && port !== undefined) await this.services.awaitGeneration(service.ID, port);
      return;
    }
    if (before.Mode.Replicated.Replicas === 0) {
      service.Spec = before;
      await this.services.write(service);
      await this.services.until(async () => !anyTaskActive(await this.services.tasks(service.ID)), "the instance to stop");
      return;
    }
    await this.services.update(id, (spec) => {
      for (const key of Object.keys(spec)) delete spec[key];
      Object.assign(spec, before);
    });
  }

  async inspect(id: string): Promise<InstanceState | null> {
    const service = await this.services.service(id);
    if (!service) return null;
    const image = service.Spec.Labels[IMAGE_LABEL] ?? service.Spec.TaskTemplate.ContainerSpec.Image;
    const port = publishedPortOf(service.Spec);
    if (service.Spec.Mode.Replicated.Replicas === 0 || port === undefined) return { id: service.ID, running: false, url: null, image };
    const outcome = generationOutcome(await this.services.tasks(service.ID), port);
    const address = outcome.kind === "running" ? await this.services.addressOf(outcome.task, port) : null;
    return address ? { id: service.ID, running: true, url: addressUrl(address), address, image } : { id: service.ID, running: false, url: null, image };
  }

  /**
   * The process state from the service's tasks (see `taskRunState`). The swarm does not carry the
   * kernel's OOM kill in a task: it is read from the ended task's container on its node's engine
   * (swarm-stats.ts), false where that engine cannot be asked (its exit code, 137 for a SIGKILL,
   * still shows).
   */
  async state(id: string): Promise<InstanceRunState | null> {
    const service = await this.services.service(id);
    if (!service) return null;
    const run = taskRunState(await this.services.tasks(service.ID), publishedPortOf(service.Spec));
    const killed = run.status !== "running" && run.ended !== null && (await oomKilled(this.nodeEngine, run.ended));
    return { id: service.ID, status: run.status, restarts: run.restarts, exitCode: run.exitCode, oomKilled: killed, createdAt: service.CreatedAt ? Date.parse(service.CreatedAt) : 0 };
  }

  /** The running task's container stats on its node (swarm-stats.ts); null while none runs or its node cannot be asked. */
  stats(id: string): Promise<InstanceStats | null> {
    return serviceStats(this.services, this.nodeEngine, id);
  }

  /** A forced update onto a new port: Swarm starts the new task before stopping the old. */
  async restart(id: string): Promise<Instance> {
    return this.services.update(id, (spec) => {
      spec.TaskTemplate.ForceUpdate = (spec.TaskTemplate.ForceUpdate ?? 0) + 1;
    });
  }

  async stop(id: string): Promise<void> {
    const service = await this.services.service(id);
    if (!service) return;
    if (service.Spec.Mode.Replicated.Replicas !== 0) {
      service.Spec.Mode.Replicated.Replicas = 0;
      await this.services.write(service);
    }
    await this.services.until(async () => !anyTaskActive(await this.services.tasks(service.ID)), "the instance to stop");
  }

  async remove(id: string): Promise<void> {
    await (await this.client.request("DELETE", `/services/${encodeURIComponent(id)}`, { accept: [404] })).arrayBuffer();
  }

  /** Creates the app's overlay network (see `appOverlaySpec`) unless it exists. */
  async ensureNetwork(name: string, labels: Record<string, string>): Promise<void> {
    const found = await this.client.request("GET", `/networks/${encodeURIComponent(name)}`, { accept: [404] });
    await found.arrayBuffer();
    if (found.ok) return;
    // 409: another launch created it meanwhile.
    await (await this.client.request("POST", "/networks/create", { json: appOverlaySpec(name, labels, this.encryptNetworks), accept: [409] })).arrayBuffer();
  }

  /**
   * Removes the app's overlay; a missing one is fine. The manager refuses it while a task of a
   * just-removed service still holds it, so that refusal is retried until the tasks are gone.
   */
  async removeNetwork(name: string): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    for (;;) {
      const res = await this.client.request("DELETE", `/networks/${encodeURIComponent(name)}`, { accept: [400, 403, 404, 409] });
      const text = await res.text();
      if (res.ok || res.status === 404) return;
      if (!/in use|active endpoints/i.test(text) || Date.now() > deadline) {
        throw new RuntimeUnavailableError(`The swarm did not remove the network ${name}: ${text.slice(0, 200)}`);
      }
      await sleep(POLL_MS);
    }
  }

  async instances(labels: Record<string, string>): Promise<string[]> {
    const filters = JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
    const { body } = await this.client.json<{ ID: string }[]>("GET", "/services", { query: { filters } });
    return body.map((s) => s.ID);
  }

  listInstances(label: { key: string; value?: string }): Promise<ListedInstance[]> {
    return listServices(this.client, label);
  }

  /** The swarm's networks (apps' overlays) whose name starts with `prefix`. */
  listNetworks(prefix: string): Promise<ListedObject[]> {
    return listNetworks(this.client, prefix);
  }

  logs(id: string, options: { tail?: number } = {}): Promise<string> {
    return serviceLogs(this.client, id, options);
  }

  logLines(id: string, options: LogOptions = {}): Promise<AsyncIterable<LogLine> | null> {
    return serviceLogLines(this.client, id, options, async () => (await this.services.service(id)) !== null);
  }

  /** The manager does not see the writable layers of tasks on other nodes: the disk watch gets none. */
  async writableBytes(_label: string): Promise<{ id: string; bytes: number }[]> {
    return [];
  }

  /** Whether a plan's memory fits on some ready node, from `/nodes` and the running reservations. */
  capacity(memoryBytes: number): Promise<CapacityVerdict> {
    return swarmCapacity(this.client, memoryBytes);
  }

  /** The service spec of `spec` published on `port`, its image pinned by digest. */
  private async specOf(spec: InstanceSpec, port: number) {
    return serviceSpec(spec, await this.imageStore.pinned(spec.image), port, this.settings);
  }
}
