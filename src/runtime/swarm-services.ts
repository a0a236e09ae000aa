/**
 * The Swarm adapter's services and their generations: reading a service and its tasks, writing a
 * spec back, and waiting until the generation publishing a port runs (moving it to another port
 * when something else holds that one on its node) or until Swarm has finished an update.
 */
import type { DockerEngineClient } from "./docker-client";
import { type ServiceJson, type ServiceSpec, publish } from "./swarm-spec";
import { type SwarmNode, type SwarmTask, generationOutcome, nodeAddress, swarmPort } from "./swarm-rules";
import { type Instance, type InstanceAddress, InstanceExitedError, type PortRange, RuntimeUnavailableError, addressUrl } from "./types";

const POLL_MS = 250;
/** How long an update may go unreported (no task to replace) before the new generation counts as converged. */
const UNREPORTED_UPDATE_MS = 4000;
/** How often a new generation moves to another port when something else holds its port. */
const PORT_MOVES = 3;

export interface SwarmServicesOptions {
  client: DockerEngineClient;
  /** The engine part of instance addresses (`engineId`). */
  engine: string;
  range: PortRange;
  /** How long a new generation may take to run (image pull included). */
  startTimeoutMs: number;
  random: () => number;
}

export class SwarmServices {
  /** Node id to the address its published ports are reached at, kept for this object's life (one request or job). */
  private readonly addresses = new Map<string, string>();

  constructor(private readonly o: SwarmServicesOptions) {}

  async service(id: string): Promise<ServiceJson | null> {
    const { status, body } = await this.o.client.json<ServiceJson>("GET", `/services/${seg(id)}`, { accept: [404] });
    return status === 404 ? null : body;
  }

  async tasks(serviceId: string): Promise<SwarmTask[]> {
    const { body } = await this.o.client.json<SwarmTask[]>("GET", "/tasks", { query: { filters: JSON.stringify({ service: [serviceId] }) } });
    return body;
  }

  async write(service: ServiceJson): Promise<void> {
    const res = await this.o.client.request("POST", `/services/${seg(service.ID)}/update`, { query: { version: String(service.Version.Index) }, json: service.Spec });
    await res.arrayBuffer();
  }

  /** A port of the range no service publishes now, nor one of `avoid`. */
  async freePort(avoid: number[] = []): Promise<number> {
    const { body } = await this.o.client.json<{ Spec?: { EndpointSpec?: { Ports?: { PublishedPort?: number }[] } } }[]>("GET", "/services");
    const used = body.flatMap((s) => (s.Spec?.EndpointSpec?.Ports ?? []).map((p) => p.PublishedPort ?? 0));
    const port = swarmPort([...used, ...avoid], this.o.range, this.o.random);
    if (port === null) throw new RuntimeUnavailableError("Every port of the instance range is taken.");
    return port;
  }

  /** Applies `change` plus a fresh port (a new generation), then waits for it to run and the update to finish. */
  async update(id: string, change: (spec: ServiceSpec) => void): Promise<Instance> {
    const service = await this.service(id);
    if (!service) throw new RuntimeUnavailableError(`The swarm has no service ${id}.`);
    const port = await this.freePort();
    change(service.Spec);
    publish(service.Spec, port);
    await this.write(service);
    return this.converged(service, await this.awaitGeneration(service.ID, port));
  }

  /**
   * `instance` once the update written over `before` has finished (its monitor period passed with
   * no failure), so nothing rolls it back later; a rollback by Swarm meanwhile is an error (the
   * service runs its previous spec again, and the proxy follows it there).
   */
  async converged(before: ServiceJson, instance: Instance): Promise<Instance> {
    const deadline = Date.now() + this.o.startTimeoutMs;
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

  /** Waits until the generation publishing `first` runs (its URL), ends (the app's fault) or is refused. */
  async awaitGeneration(serviceId: string, first: number): Promise<Instance> {
    const deadline = Date.now() + this.o.startTimeoutMs;
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

  /** Polls `check` until it holds; RuntimeUnavailableError past the start timeout. */
  async until(check: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + this.o.startTimeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new RuntimeUnavailableError(`The swarm did not finish waiting for ${what} in time.`);
      await sleep(POLL_MS);
    }
  }

  /** Where a task's `port` answers: its node's address (see `nodeAddress`); null while the node is unknown. */
  async addressOf(task: SwarmTask, port: number): Promise<InstanceAddress | null> {
    const address = task.NodeID ? await this.nodeAddress(task.NodeID) : null;
    return address ? { engine: this.o.engine, node: address, port } : null;
  }

  /** A node's address, looked up once per node. */
  async nodeAddress(nodeId: string): Promise<string | null> {
    let address = this.addresses.get(nodeId);
    if (!address) {
      const { status, body } = await this.o.client.json<SwarmNode>("GET", `/nodes/${seg(nodeId)}`, { accept: [404] });
      address = status === 404 ? undefined : (nodeAddress(body) ?? undefined);
      if (!address) return null;
      this.addresses.set(nodeId, address);
    }
    return address;
  }

  /** Publishes the service on another port than `taken` (a new generation of the same spec). */
  private async movePort(serviceId: string, taken: number): Promise<number> {
    const service = await this.service(serviceId);
    if (!service) throw new RuntimeUnavailableError(`The swarm has no service ${serviceId}.`);
    const port = await this.freePort([taken]);
    publish(service.Spec, port);
    await this.write(service);
    return port;
  }
}

function seg(value: string): string {
  return encodeURIComponent(value);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
