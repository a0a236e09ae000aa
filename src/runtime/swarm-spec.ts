/**
 * The Swarm service that is one instance: its spec (image by digest, the app's variables, limits,
 * health check, one replica, published in host mode on the generation's port) as the Engine API
 * takes it. Pure (no I/O).
 */
import { GENERATION_LABEL, RESTART_ATTEMPTS, RESTART_WINDOW_NS, taskHealthcheck } from "./swarm-rules";
import type { InstanceSpec } from "./types";

/** The subset of `GET /services/{id}` read and written back. */
export interface ServiceJson {
  ID: string;
  CreatedAt?: string;
  Version: { Index: number };
  Spec: ServiceSpec;
  PreviousSpec?: ServiceSpec;
  UpdateStatus?: { State?: string; StartedAt?: string; Message?: string };
}

export interface ServiceSpec {
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
export const IMAGE_LABEL = "cp.image";

/** What every service of this swarm gets alike: the stop grace period and placement constraints. */
export interface ServiceSettings {
  graceSeconds: number;
  constraints: string[];
}

/** The service spec of an instance: `image` by digest, published on `port` (its generation). */
export function serviceSpec(spec: InstanceSpec, image: string, port: number, settings: ServiceSettings): ServiceSpec {
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
        StopGracePeriod: settings.graceSeconds * 1e9,
        ...(spec.healthCheck ? { Healthcheck: taskHealthcheck(spec.healthCheck, spec.port) } : {}),
      },
      Resources: {
        Limits: { NanoCPUs: Math.round(spec.limits.cpus * 1e9), MemoryBytes: spec.limits.memoryBytes, Pids: spec.limits.pids ?? 256 },
        // Reserving the plan's memory makes the scheduler keep the sums the capacity check reads.
        Reservations: { MemoryBytes: spec.limits.memoryBytes },
      },
      RestartPolicy: { Condition: "on-failure", Delay: 5e9, MaxAttempts: RESTART_ATTEMPTS, Window: RESTART_WINDOW_NS },
      Placement: { Constraints: settings.constraints },
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

/** Publishes `spec` on `port` instead (a new generation of the same spec). */
export function publish(spec: ServiceSpec, port: number): void {
  spec.EndpointSpec = endpoint(spec.EndpointSpec.Ports[0]?.TargetPort ?? 0, port);
  spec.TaskTemplate.ContainerSpec.Labels = { ...spec.TaskTemplate.ContainerSpec.Labels, [GENERATION_LABEL]: String(port) };
}

/** The port the service's current generation publishes, if any. */
export function publishedPortOf(spec: ServiceSpec): number | undefined {
  return spec.EndpointSpec.Ports[0]?.PublishedPort;
}

function endpoint(target: number, published: number): ServiceSpec["EndpointSpec"] {
  return { Mode: "dnsrr", Ports: [{ Protocol: "tcp", TargetPort: target, PublishedPort: published, PublishMode: "host" }] };
}
