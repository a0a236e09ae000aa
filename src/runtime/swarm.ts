/**
 * `ContainerRuntime` on Docker Swarm: one replicated service per instance. Images are built on
 * the manager (through the Docker adapter), pushed to a Docker Distribution registry and run by
 * digest, so every node pulls exactly what was built. Ports are published in host mode (the
 * ingress mesh needs IPVS) on a port of the instance range chosen per service generation, so the
 * port in a task's labels tells which generation it belongs to. Runs in workerd and in Node.
 */
import { checkCapacity, type CapacityVerdict } from "./capacity";
import { DockerEngineClient } from "./docker-client";
import { DockerRuntime } from "./docker";
import { JsonLinesDecoder, demultiplexLogs } from "./docker-stream";
import { listNetworks, listServices } from "./listing";
import { RegistryClient } from "./registry";
import {
  DEFAULT_PORT_RANGE,
  GENERATION_LABEL,
  type ManagerInfo,
  RESTART_ATTEMPTS,
  RESTART_WINDOW_NS,
  type PortRange,
  type SwarmNode,
  type SwarmTask,
  anyTaskActive,
  appOverlaySpec,
  generationOutcome,
  nodeAddress,
  pickPort,
  pushResult,
  registryAuthHeader,
  splitReference,
  swarmProblems,
  NO_NEW_PRIVILEGES_UNCHECKED,
  noNewPrivilegesProblems,
  usableNodes,
  taskHealthcheck,
  taskRunState,
} from "./swarm-rules";
import { ServiceLogDecoder, serviceLogQuery } from "./swarm-logs";
import { runNoNewPrivilegesProbe } from "./swarm-probe";
import {
  type BuildOutcome,
  type BuildSpec,
  type ContainerRuntime,
  type Instance,
  type InstanceAddress,
  type InstanceRunState,
  type InstanceSpec,
  type InstanceState,
  type ListedInstance,
  type ListedObject,
  type LogLine,
  type LogOptions,
  InstanceExitedError,
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
  random?: () => number;
}

/** The subset of `GET /services/{id}` read and written back here. */
interface ServiceJson {
  ID: string;
  CreatedAt?: string;
  Version: { Index: number };
  Spec: ServiceSpec;
  PreviousSpec?: ServiceSpec;
  UpdateStatus?: { State?: string; StartedAt?: string; Message?: string };
}

interface ServiceSpec {
  Name: string;
  Labels: Record<string, string>;
  TaskTemplate: {
    ContainerSpec: { Image: string; Labels: Record<string, string>; [key: string]: unknown };
    ForceUpdate?: number;
    [key: string]: unknown;
  };
  Mode: { Replicated: { Replicas: number } };
  EndpointSpec: { Mode: "dnsrr" | "vip"; Ports: { Protocol: "tcp"; TargetPort: number; PublishedPort: number; PublishMode: "host" }[] };
  [key: string]: unknown;
}

/** Service label holding the image reference the caller gave (the spec runs it by digest). */
const IMAGE_LABEL = "cp.image";
const POLL_MS = 250;
/** A service logs reply without `follow` that sends nothing for this long has sent everything. */
const LOGS_QUIET_MS = 3000;
/** How long an update may go unreported (no task to replace) before the new generation counts as converged. */
const UNREPORTED_UPDATE_MS = 4000;
/** How often a new generation moves to another port when something else holds its port. */
const PORT_MOVES = 3;
/** Engine calls that reach the registry: a push, and service writes (the nodes then pull). */
const REGISTRY_CALLS = /\/(images\/.+\/push|services\/create|services\/[^/]+\/update|distribution\/.+\/json)$/;

/** How often a followed service log looks whether its service still exists. */
const FOLLOW_CHECK_MS = 1000;

export class SwarmRuntime implements ContainerRuntime {
  private readonly client: DockerEngineClient;
  private readonly local: DockerRuntime;
  private readonly registry: string;
  private readonly range: PortRange;
  private readonly grace: number;
  private readonly startTimeoutMs: number;
  private readonly constraints: string[];
  private readonly probeImage: string | undefined;
  private readonly encryptNetworks: boolean;
  private readonly random: () => number;
  private readonly addresses = new Map<string, string>();
  private readonly engine: string;
  private readonly remoteRegistry: RegistryClient | undefined;

  constructor(options: SwarmRuntimeOptions) {
    this.registry = options.registry.replace(/\/+$/, "");
    const registryHost = this.registry.split("/")[0]!;
    // The engine wants the header on a push even without credentials (then `{}`).
    const auth = options.registryAuth ? registryAuthHeader(options.registryAuth, registryHost) : registryAuthHeader(null, registryHost);
    const base = options.fetch ?? ((input, init) => fetch(input, init));
    // The registry credentials ride on the calls that push or make nodes pull, never on others.
    const fetcher: typeof fetch = (input, init) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (!REGISTRY_CALLS.test(new URL(url).pathname)) return base(input, init);
      const headers = new Headers(init?.headers);
      headers.set("X-Registry-Auth", auth);
      return base(input, { ...init, headers });
    };
    this.client = new DockerEngineClient(options.url, fetcher);
    this.engine = engineId("swarm", options.url);
    this.local = new DockerRuntime({ url: options.url, fetch: fetcher, stopTimeoutSeconds: options.stopGraceSeconds });
    this.remoteRegistry = options.registryApi ? new RegistryClient(options.registryApi, options.registryAuth) : undefined;
    this.range = options.portRange ?? DEFAULT_PORT_RANGE;
    this.grace = options.stopGraceSeconds ?? 10;
    this.startTimeoutMs = (options.startTimeoutSeconds ?? 120) * 1000;
    this.constraints = options.constraints ?? [];
    this.probeImage = options.probeImage || undefined;
    this.encryptNetworks = options.encryptNetworks ?? true;
    this.random = options.random ?? Math.random;
  }

  async ping(): Promise<{ apiVersion: string }> {
    const apiVersion = await this.client.ping();
    const { body } = await this.client.json<{ Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } }>("GET", "/info");
    if (body.Swarm?.LocalNodeState !== "active" || !body.Swarm.ControlAvailable) {
      throw new RuntimeUnavailableError("The container engine is not a Docker Swarm manager (RUNTIME_KIND=swarm needs one).");
    }
    return { apiVersion };
  }

  /**
   * The start-up report: what the operator should fix on the swarm ([] when nothing). On a
   * manager with nodes to place apps on, it also runs the no-new-privileges probe on each of them.
   */
  async report(): Promise<string[]> {
    const [info, listed] = await Promise.all([this.client.json<ManagerInfo>("GET", "/info"), this.client.json<SwarmNode[]>("GET", "/nodes", { accept: [503] })]);
    const nodes = listed.status === 503 ? [] : listed.body;
    const problems = swarmProblems(info.body, nodes);
    if (listed.status === 503 || usableNodes(nodes).length === 0) return problems;
    if (!this.probeImage) return [...problems, NO_NEW_PRIVILEGES_UNCHECKED];
    const runs = await runNoNewPrivilegesProbe(
      {
        client: this.client,
        image: this.probeImage,
        readTaskLogs: async (taskId) => {
          const res = await this.client.request("GET", `/tasks/${seg(taskId)}/logs`, { query: { stdout: "1", stderr: "1" }, accept: [404], untimed: true });
          const body = await readQuietEnd(res.body);
          return res.ok ? demultiplexLogs(body) : "";
        },
        timeoutMs: this.startTimeoutMs,
        pollMs: POLL_MS,
      },
      nodes,
    );
    return [...problems, ...noNewPrivilegesProblems(nodes, runs)];
  }

  /** Builds on the manager, then pushes to the registry; the image is then known by its digest. */
  async build(spec: BuildSpec): Promise<BuildOutcome> {
    const outcome = await this.local.build(spec);
    if (!outcome.ok) return outcome;
    const remote = this.remoteOf(spec.tag);
    const { name, tag } = splitReference(remote);
    await this.drain(this.client.request("POST", `/images/${imagePath(spec.tag)}/tag`, { query: { repo: name, tag } }));
    const res = await this.client.request("POST", `/images/${imagePath(name)}/push`, { query: { tag }, untimed: true });
    const pushed = pushResult(await readJsonLines(res));
    if ("error" in pushed) throw new RuntimeUnavailableError(`Pushing the image to the registry failed: ${pushed.error}`);
    await spec.onOutput?.(`Pushed ${remote}@${pushed.digest}\n`);
    return { ok: true, image: spec.tag };
  }

  async start(spec: InstanceSpec): Promise<Instance> {
    if (spec.network) await this.ensureNetwork(spec.network, {});
    const port = await this.freePort();
    const serviceSpec = this.serviceSpec(spec, await this.pinned(spec.image), port);
    const { body } = await this.client.json<{ ID: string }>("POST", "/services/create", { json: serviceSpec });
    return this.awaitGeneration(body.ID, port);
  }

  /**
   * A service update to `spec` (image, variables, limits, health check, one replica) on a new
   * port: Swarm starts the new task before it stops the old one (start-first) and rolls the
   * update back when the new task fails. Resolves once the new generation runs and Swarm has
   * finished the update.
   */
  async replace(id: string, spec: InstanceSpec): Promise<Instance> {
    const service = await this.service(id);
    if (!service) return this.start(spec);
    if (spec.network) await this.ensureNetwork(spec.network, {});
    const port = await this.freePort();
    const next = this.serviceSpec(spec, await this.pinned(spec.image), port);
    // A service keeps its name; the restart counter goes on from where it is.
    next.Name = service.Spec.Name;
    if (service.Spec.TaskTemplate.ForceUpdate !== undefined) next.TaskTemplate.ForceUpdate = service.Spec.TaskTemplate.ForceUpdate;
    service.Spec = next;
    await this.write(service);
    return this.converged(service, await this.awaitGeneration(service.ID, port));
  }

  /**
   * Back to the spec before the last update (stopped when it was stopped), as a new generation on
   * a fresh port (the previous generation's port may still be held by its task on the node),
   * unless Swarm's own rollback already did that; waits until it runs again.
   */
  async revert(id: string): Promise<void> {
    const service = await this.service(id);
    if (!service) return;
    const previous = service.PreviousSpec;
    if (service.UpdateStatus?.State?.startsWith("rollback") || !previous) {
      const port = service.Spec.EndpointSpec.Ports[0]?.PublishedPort;
      if (service.Spec.Mode.Replicated.Replicas > 0 && port !== undefined) await this.awaitGeneration(service.ID, port);
      return;
    }
    if (previous.Mode.Replicated.Replicas === 0) {
      service.Spec = previous;
      await this.write(service);
      await this.until(async () => !anyTaskActive(await this.tasks(service.ID)), "the instance to stop");
      return;
    }
    await this.update(id, (spec) => {
      for (const key of Object.keys(spec)) delete spec[key];
      Object.assign(spec, previous);
    });
  }

  /** The service spec of an instance: `image` by digest, published on `port` (its generation). */
  private serviceSpec(spec: InstanceSpec, image: string, port: number): ServiceSpec {
    return {
      Name: spec.name,
      Labels: { ...spec.labels, [IMAGE_LABEL]: spec.image },
      TaskTemplate: {
        ContainerSpec: {
          Image: image,
          Labels: { ...spec.labels, [GENERATION_LABEL]: String(port) },
          // Exactly the app's variables: the deployment contract sets no PORT.
          Env: Object.entries(spec.env).map(([key, value]) => `${key}=${value}`),
          // A tiny init as PID 1 forwards SIGTERM, so processes that ignore it as PID 1 still stop.
          Init: true,
          CapabilityDrop: ["ALL"],
          CapabilityAdd: ["CAP_CHOWN", "CAP_SETUID", "CAP_SETGID", "CAP_NET_BIND_SERVICE"],
          StopGracePeriod: this.grace * 1e9,
          ...(spec.healthCheck ? { Healthcheck: taskHealthcheck(spec.healthCheck, spec.port) } : {}),
        },
        Resources: {
          Limits: { NanoCPUs: Math.round(spec.limits.cpus * 1e9), MemoryBytes: spec.limits.memoryBytes, Pids: spec.limits.pids ?? 256 },
          // Reserving the plan's memory makes the scheduler keep the sums the capacity check reads.
          Reservations: { MemoryBytes: spec.limits.memoryBytes },
        },
        RestartPolicy: { Condition: "on-failure", Delay: 5e9, MaxAttempts: RESTART_ATTEMPTS, Window: RESTART_WINDOW_NS },
        Placement: { Constraints: this.constraints },
        // The app's own overlay: other apps' tasks, on any node, are not on it.
        ...(spec.network ? { Networks: [{ Target: spec.network }] } : {}),
      },
      Mode: { Replicated: { Replicas: 1 } },
      // The Worker probes the new task itself; the monitor period only has to catch a task that dies at once.
      UpdateConfig: { Parallelism: 1, Order: "start-first", FailureAction: "rollback", Monitor: 2e9 },
      RollbackConfig: { Parallelism: 1, Order: "start-first", FailureAction: "pause" },
      EndpointSpec: endpoint(spec.port, port),
    };
  }

  async inspect(id: string): Promise<InstanceState | null> {
    const service = await this.service(id);
    if (!service) return null;
    const image = service.Spec.Labels[IMAGE_LABEL] ?? service.Spec.TaskTemplate.ContainerSpec.Image;
    const port = service.Spec.EndpointSpec.Ports[0]?.PublishedPort;
    if (service.Spec.Mode.Replicated.Replicas === 0 || port === undefined) return { id: service.ID, running: false, url: null, image };
    const outcome = generationOutcome(await this.tasks(service.ID), port);
    const address = outcome.kind === "running" ? await this.addressOf(outcome.task, port) : null;
    return address ? { id: service.ID, running: true, url: addressUrl(address), address, image } : { id: service.ID, running: false, url: null, image };
  }

  /**
   * The process state from the service's tasks (see `taskRunState`). The swarm does not carry the
   * kernel's OOM kill in a task: it is read from the ended task's container on the engine this
   * adapter talks to, so it is known for tasks that ran on the manager and false for those on
   * other nodes (their exit code, 137 for a SIGKILL, still shows).
   */
  async state(id: string): Promise<InstanceRunState | null> {
    const service = await this.service(id);
    if (!service) return null;
    const run = taskRunState(await this.tasks(service.ID), service.Spec.EndpointSpec.Ports[0]?.PublishedPort);
    const oomKilled = run.status !== "running" && run.ended !== null && (await this.oomKilled(run.ended.containerId));
    return {
      id: service.ID,
      status: run.status,
      restarts: run.restarts,
      exitCode: run.exitCode,
      oomKilled,
      createdAt: service.CreatedAt ? Date.parse(service.CreatedAt) : 0,
    };
  }

  /** Whether the kernel's OOM killer ended this container; false when this engine does not hold it. */
  private async oomKilled(containerId: string): Promise<boolean> {
    const { status, body } = await this.client.json<{ State?: { OOMKilled?: boolean } }>("GET", `/containers/${seg(containerId)}/json`, { accept: [404] });
    return status !== 404 && body.State?.OOMKilled === true;
  }

  /** A forced update onto a new port: Swarm starts the new task before stopping the old. */
  async restart(id: string): Promise<Instance> {
    return this.update(id, (spec) => {
      spec.TaskTemplate.ForceUpdate = (spec.TaskTemplate.ForceUpdate ?? 0) + 1;
    });
  }

  async stop(id: string): Promise<void> {
    const service = await this.service(id);
    if (!service) return;
    if (service.Spec.Mode.Replicated.Replicas !== 0) {
      service.Spec.Mode.Replicated.Replicas = 0;
      await this.write(service);
    }
    await this.until(async () => !anyTaskActive(await this.tasks(service.ID)), "the instance to stop");
  }

  async resume(id: string): Promise<Instance> {
    return this.update(id, (spec) => {
      spec.Mode.Replicated.Replicas = 1;
    });
  }

  async remove(id: string): Promise<void> {
    await this.drain(this.client.request("DELETE", `/services/${seg(id)}`, { accept: [404] }));
  }

  /** Creates the app's overlay network (see `appOverlaySpec`) unless it exists. */
  async ensureNetwork(name: string, labels: Record<string, string>): Promise<void> {
    const found = await this.client.request("GET", `/networks/${seg(name)}`, { accept: [404] });
    await found.arrayBuffer();
    if (found.ok) return;
    // 409: another launch created it meanwhile.
    await this.drain(this.client.request("POST", "/networks/create", { json: appOverlaySpec(name, labels, this.encryptNetworks), accept: [409] }));
  }

  /**
   * Removes the app's overlay; a missing one is fine. The manager refuses it while a task of a
   * just-removed service still holds it, so that refusal is retried until the tasks are gone.
   */
  async removeNetwork(name: string): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    for (;;) {
      const res = await this.client.request("DELETE", `/networks/${seg(name)}`, { accept: [400, 403, 404, 409] });
      const text = await res.text();
      if (res.ok || res.status === 404) return;
      if (!/in use|active endpoints/i.test(text) || Date.now() > deadline) {
        throw new RuntimeUnavailableError(`The swarm did not remove the network ${name}: ${text.slice(0, 200)}`);
      }
      await sleep(POLL_MS);
    }
  }

  /** Removes the image on the manager under both its names, and its tag in the registry when reachable. */
  async removeImage(image: string): Promise<void> {
    await this.local.removeImage(this.remoteOf(image));
    await this.local.removeImage(image);
    if (this.remoteRegistry) {
      const { name, tag } = splitReference(this.remoteOf(image));
      // A tag is in use while the manager still has the image it names (removed images lose theirs first).
      await this.remoteRegistry.deleteTag(name.slice(name.indexOf("/") + 1), tag, (other) => this.local.hasImage(`${name}:${other}`));
    }
  }

  async instances(labels: Record<string, string>): Promise<string[]> {
    const filters = JSON.stringify({ label: Object.entries(labels).map(([key, value]) => `${key}=${value}`) });
    const { body } = await this.client.json<{ ID: string }[]>("GET", "/services", { query: { filters } });
    return body.map((s) => s.ID);
  }

  images(repository: string): Promise<string[]> {
    return this.local.images(repository);
  }

  listInstances(label: { key: string; value?: string }): Promise<ListedInstance[]> {
    return listServices(this.client, label);
  }

  /** The swarm's networks (apps' overlays) whose name starts with `prefix`. */
  listNetworks(prefix: string): Promise<ListedObject[]> {
    return listNetworks(this.client, prefix);
  }

  /** The manager's images under the names the control plane gave them (their registry copies follow them on removal). */
  listImages(prefix: string): Promise<ListedObject[]> {
    return this.local.listImages(prefix);
  }

  hasImage(image: string): Promise<boolean> {
    return this.local.hasImage(image);
  }

  imageDigest(image: string): Promise<string | null> {
    return this.local.imageDigest(image);
  }

  /** Every task's output (tasks on any node), the last `tail` lines; a missing service has none. */
  async logs(id: string, options: { tail?: number } = {}): Promise<string> {
    const tail = options.tail === undefined ? "all" : String(Math.max(0, Math.floor(options.tail)));
    const res = await this.client.request("GET", `/services/${seg(id)}/logs`, { query: { stdout: "1", stderr: "1", tail }, accept: [404], untimed: true });
    const body = await readQuietEnd(res.body);
    return res.ok ? demultiplexLogs(body) : "";
  }

  /**
   * Every task's output as timestamped lines (`/services/{id}/logs`, tasks on any node); with
   * `follow`, lines as they are printed until `signal` aborts. Null for a missing service.
   */
  async logLines(id: string, options: LogOptions = {}): Promise<AsyncIterable<LogLine> | null> {
    // A manager keeps a followed service's log call open after the service is removed, so a
    // follower also ends when the service is gone (looked up every FOLLOW_CHECK_MS).
    const ended = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, ended.signal]) : ended.signal;
    const res = await this.client.request("GET", `/services/${seg(id)}/logs`, {
      query: serviceLogQuery(options),
      accept: [404],
      ...(options.follow ? { untimed: true } : {}),
      signal,
    });
    if (res.status === 404) {
      await res.arrayBuffer();
      return null;
    }
    if (options.follow) void this.endWhenGone(id, ended, signal);
    return decodeLines(res.body, signal, () => ended.abort());
  }

  /** Aborts `ended` once the service no longer exists; stops looking when `signal` aborts. */
  private async endWhenGone(id: string, ended: AbortController, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, FOLLOW_CHECK_MS));
      if (signal.aborted) return;
      const service = await this.service(id).catch(() => undefined);
      if (service === null) ended.abort();
    }
  }

  /** Whether a plan's memory fits on some ready node, from `/nodes` and the running reservations. */
  async capacity(memoryBytes: number): Promise<CapacityVerdict> {
    const [nodes, tasks] = await Promise.all([
      this.client.json<SwarmNode[]>("GET", "/nodes"),
      this.client.json<(SwarmTask & { Spec?: { Resources?: { Reservations?: { MemoryBytes?: number } } } })[]>("GET", "/tasks", {
        query: { filters: JSON.stringify({ "desired-state": ["running"] }) },
      }),
    ]);
    return checkCapacity(
      memoryBytes,
      nodes.body.map((n) => ({ id: n.ID, state: n.Status?.State ?? "", availability: n.Spec?.Availability ?? "", memoryBytes: n.Description?.Resources?.MemoryBytes ?? 0 })),
      tasks.body.map((t) => ({ nodeId: t.NodeID ?? "", desiredState: t.DesiredState ?? "", memoryBytes: t.Spec?.Resources?.Reservations?.MemoryBytes ?? 0 })),
    );
  }

  /** Applies `change` plus a fresh port (a new generation), then waits for it to run. */
  private async update(id: string, change: (spec: ServiceSpec) => void): Promise<Instance> {
    const service = await this.service(id);
    if (!service) throw new RuntimeUnavailableError(`The swarm has no service ${id}.`);
    const port = await this.freePort();
    change(service.Spec);
    this.publish(service.Spec, port);
    await this.write(service);
    return this.converged(service, await this.awaitGeneration(service.ID, port));
  }

  /**
   * `instance` once the update written over `before` has finished (its monitor period passed with
   * no failure), so nothing rolls it back later; a rollback by Swarm meanwhile is an error (the
   * service runs its previous spec again, and the proxy follows it there).
   */
  private async converged(before: ServiceJson, instance: Instance): Promise<Instance> {
    const deadline = Date.now() + this.startTimeoutMs;
    // A service that had no task to replace (scaled to 0) may report no update at all.
    const unreported = Date.now() + UNREPORTED_UPDATE_MS;
    for (;;) {
      const service = await this.service(before.ID);
      if (!service) throw new RuntimeUnavailableError(`The swarm has no service ${before.ID}.`);
      const status = service.UpdateStatus;
      const fresh = status?.StartedAt !== undefined && status.StartedAt !== before.UpdateStatus?.StartedAt;
      if (fresh && status?.State === "completed") return instance;
      if (fresh && status?.State && status.State !== "updating" && status.State !== "completed") {
        throw new RuntimeUnavailableError(`The swarm did not keep the update (${status.State}): ${status.Message ?? "no reason given"}`);
      }
      if (!fresh && Date.now() > unreported) return instance;
      if (Date.now() > deadline) throw new RuntimeUnavailableError("The swarm did not finish the update in time.");
      await sleep(POLL_MS);
    }
  }

  /** Publishes the service on another port than `taken` (a new generation of the same spec). */
  private async movePort(serviceId: string, taken: number): Promise<number> {
    const service = await this.service(serviceId);
    if (!service) throw new RuntimeUnavailableError(`The swarm has no service ${serviceId}.`);
    const port = await this.freePort([taken]);
    this.publish(service.Spec, port);
    await this.write(service);
    return port;
  }

  private publish(spec: ServiceSpec, port: number): void {
    spec.EndpointSpec = endpoint(spec.EndpointSpec.Ports[0]?.TargetPort ?? 0, port);
    spec.TaskTemplate.ContainerSpec.Labels = { ...spec.TaskTemplate.ContainerSpec.Labels, [GENERATION_LABEL]: String(port) };
  }

  private async write(service: ServiceJson): Promise<void> {
    await this.drain(
      this.client.request("POST", `/services/${seg(service.ID)}/update`, { query: { version: String(service.Version.Index) }, json: service.Spec }),
    );
  }

  /** Waits until the generation publishing `port` runs (its URL), ends (the app's fault) or is refused. */
  private async awaitGeneration(serviceId: string, first: number): Promise<Instance> {
    const deadline = Date.now() + this.startTimeoutMs;
    let port = first;
    let moves = 0;
    for (;;) {
      const outcome = generationOutcome(await this.tasks(serviceId), port);
      if (outcome.kind === "portTaken") {
        // The same spec on another free port; a few tries, then the clash is the answer.
        if (++moves > PORT_MOVES) throw new RuntimeUnavailableError(`The swarm could not publish the instance: ${outcome.reason}`);
        port = await this.movePort(serviceId, port);
        continue;
      }
      if (outcome.kind === "running") {
        const address = await this.addressOf(outcome.task, port);
        if (address) return { id: serviceId, url: addressUrl(address), address };
      }
      if (outcome.kind === "exited") throw new InstanceExitedError(serviceId, outcome.exitCode);
      if (outcome.kind === "refused") throw new RuntimeUnavailableError(`The swarm could not run the instance: ${outcome.reason}`);
      if (Date.now() > deadline) {
        throw new RuntimeUnavailableError(`The swarm did not start the instance in time (its task is ${outcome.kind === "waiting" ? outcome.state : outcome.kind}).`);
      }
      await sleep(POLL_MS);
    }
  }

  private async until(check: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + this.startTimeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new RuntimeUnavailableError(`The swarm did not finish waiting for ${what} in time.`);
      await sleep(POLL_MS);
    }
  }

  private async addressOf(task: SwarmTask, port: number): Promise<InstanceAddress | null> {
    if (!task.NodeID) return null;
    let address = this.addresses.get(task.NodeID);
    if (!address) {
      const { status, body } = await this.client.json<SwarmNode>("GET", `/nodes/${seg(task.NodeID)}`, { accept: [404] });
      address = status === 404 ? undefined : (nodeAddress(body) ?? undefined);
      if (!address) return null;
      // Kept for this runtime object's life (one request or job): a node's address rarely changes.
      this.addresses.set(task.NodeID, address);
    }
    return { engine: this.engine, node: address, port };
  }

  /** The registry reference by digest of an image built here, e.g. `reg/cp-app-1:d1@sha256:…`. */
  private async pinned(image: string): Promise<string> {
    const remote = this.remoteOf(image);
    const { name } = splitReference(remote);
    const { status, body } = await this.client.json<{ RepoDigests?: string[] }>("GET", `/images/${imagePath(remote)}/json`, { accept: [404] });
    const digest = status === 404 ? undefined : body.RepoDigests?.find((d) => d.startsWith(`${name}@`));
    if (!digest) throw new RuntimeUnavailableError(`The image ${image} was not pushed to the registry; build it again.`);
    return `${remote}@${digest.slice(name.length + 1)}`;
  }

  private async freePort(avoid: number[] = []): Promise<number> {
    const { body } = await this.client.json<{ Spec?: { EndpointSpec?: { Ports?: { PublishedPort?: number }[] } } }[]>("GET", "/services");
    const used = body.flatMap((s) => (s.Spec?.EndpointSpec?.Ports ?? []).map((p) => p.PublishedPort ?? 0));
    const port = pickPort([...used, ...avoid], this.range, this.random);
    if (port === null) throw new RuntimeUnavailableError("Every port of the instance range is taken.");
    return port;
  }

  private async service(id: string): Promise<ServiceJson | null> {
    const { status, body } = await this.client.json<ServiceJson>("GET", `/services/${seg(id)}`, { accept: [404] });
    return status === 404 ? null : body;
  }

  private async tasks(serviceId: string): Promise<SwarmTask[]> {
    const { body } = await this.client.json<SwarmTask[]>("GET", "/tasks", { query: { filters: JSON.stringify({ service: [serviceId] }) } });
    return body;
  }

  private remoteOf(image: string): string {
    return `${this.registry}/${image}`;
  }

  private async drain(pending: Promise<Response>): Promise<void> {
    await (await pending).arrayBuffer();
  }
}

/**
 * A service logs body read to its end, or until it has been quiet for LOGS_QUIET_MS: the manager
 * gathers the lines from every task's node and, on Docker 20.10, may keep the reply open after
 * the last one even without `follow`.
 */
async function readQuietEnd(body: ReadableStream<Uint8Array> | null): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const quiet = new Promise<"quiet">((resolve) => (timer = setTimeout(() => resolve("quiet"), LOGS_QUIET_MS)));
      const next = await Promise.race([reader.read(), quiet]).finally(() => clearTimeout(timer));
      if (next === "quiet" || next.done) break;
      parts.push(next.value);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

async function* decodeLines(body: ReadableStream<Uint8Array> | null, signal: AbortSignal, done: () => void): AsyncIterable<LogLine> {
  if (!body) return done();
  const decoder = new ServiceLogDecoder();
  const reader = body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* decoder.push(value);
    }
    yield* decoder.flush();
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    signal.removeEventListener("abort", stop);
    // Whatever ended the stream (its end, the reader, the service gone), the lookups stop too.
    done();
    await reader.cancel().catch(() => undefined);
  }
}

function endpoint(target: number, published: number): ServiceSpec["EndpointSpec"] {
  return { Mode: "dnsrr", Ports: [{ Protocol: "tcp", TargetPort: target, PublishedPort: published, PublishMode: "host" }] };
}

async function readJsonLines(res: Response): Promise<unknown[]> {
  const lines = new JsonLinesDecoder();
  return [...lines.push(await res.text()), ...lines.flush()];
}

function seg(value: string): string {
  return encodeURIComponent(value);
}

function imagePath(image: string): string {
  return image.split("/").map(encodeURIComponent).join("/");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
