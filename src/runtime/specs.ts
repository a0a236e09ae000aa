/**
 * The shapes the runtime contract (`types.ts`) speaks in: what to build, what to run, where an
 * instance answers, what the engine reports of it. Data only, besides two pure helpers.
 */

/** The inclusive range of host ports instances publish on (INSTANCE_PORT_RANGE), e.g. 20000-29999. */
export interface PortRange {
  first: number;
  last: number;
}

/** Memory and CPU given to one instance; from the app's plan. */
export interface InstanceLimits {
  memoryBytes: number;
  /** Fractional CPUs, e.g. 0.5. */
  cpus: number;
  /** Processes and threads at most (a fork loop stops there); default `DEFAULT_PIDS_LIMIT`. */
  pids?: number;
}

export interface BuildSpec {
  /** The build context as a tar stream (uncompressed). */
  context: ReadableStream<Uint8Array>;
  /** Path of the build file inside the context, e.g. `Dockerfile` or `docker/web.Dockerfile`. */
  dockerfile: string;
  /** Image reference to give the result, e.g. `cp-app-<app id>:<deploy id>`. */
  tag: string;
  /** Build output as it comes, one or more whole lines per call (engine's stream decoded). */
  onOutput?: (text: string) => void | Promise<void>;
  /** Memory and CPU the build's steps may use (BUILD_MEMORY_MB, BUILD_CPUS). */
  limits?: InstanceLimits;
  /**
   * BUILD_TIMEOUT_SECONDS: past it the build is cancelled on the engine (the adapter ends the
   * build call, which makes the engine stop the step it runs and remove its container) and the
   * outcome is `{ok: false, timedOut: true}`.
   */
  timeoutSeconds?: number;
  /** Ends the build call early (its context broke off); the build then rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * A secret naming the app's build cache (16-63 lowercase letters and digits): a step is reused
   * only from earlier builds of the same scope, so another app's identical Dockerfile never hits
   * this app's layers. Absent: nothing is reused from any earlier build.
   */
  cacheScope?: string;
  /**
   * BUILD_DISK_MB in bytes: the image being built, base image included, may not grow past it
   * (measured while the classic builder runs, src/runtime/build-disk.ts); past it the build is
   * ended and the outcome is `{ok: false, diskExceeded: true}`.
   */
  diskBytes?: number;
}

export type BuildOutcome =
  | { ok: true; image: string }
  /** `error`: the engine's sentence (or ours); `failedStep`: the build step that failed (`Step 3/5 : RUN make`), when known. */
  | { ok: false; error: string; failedStep?: string; timedOut?: true; diskExceeded?: true };

export interface InstanceSpec {
  image: string;
  /** Unique among live instances; adapters may use it as the container or service name. */
  name: string;
  /** Labels to find an app's instances again (`app_id`, `deploy_id`). */
  labels: Record<string, string>;
  /** The app's variables; no `PORT` is ever added. */
  env: Record<string, string>;
  /** The one HTTP port the app listens on inside the instance. */
  port: number;
  limits: InstanceLimits;
  /**
   * The app's own network (see `ensureNetwork`): instances of other apps cannot reach it. Absent:
   * the engine's default bridge, which every such instance shares.
   */
  network?: string;
  /** The host port to publish on, allocated by the control plane (`ports.ts`); absent: the engine picks. */
  hostPort?: number;
  /** The app's health check; an adapter whose engine checks health itself (Swarm) passes it on. */
  healthCheck?: HealthCheckSpec;
}

/**
 * Where an instance's HTTP port answers, independent of how the Worker gets there: the engine
 * that runs it, the address of the machine (node) it runs on, and the host port it is published
 * on there. On one engine the node is the engine's own host; on a swarm it is the node that runs
 * the task now (it changes when the swarm reschedules the instance). The proxy reaches it directly
 * (`http://<node>:<port>`) or through the node proxy on that machine (src/routing/instance-target.ts).
 */
export interface InstanceAddress {
  /** The engine, as `<kind>:<host of RUNTIME_URL>`, e.g. `swarm:engine.example.net` (see `engineId`). */
  engine: string;
  /** The node's address or host name, e.g. `10.0.0.2` or `node2.example.net`. */
  node: string;
  port: number;
}

export interface Instance {
  id: string;
  /** Base URL at which the Worker reaches the instance's HTTP port directly, e.g. `http://127.0.0.1:32768`. */
  url: string;
  /** The same place as engine, node and port (adapters that know them set it). */
  address?: InstanceAddress;
}

export interface InstanceState {
  id: string;
  running: boolean;
  /** Where the port is reachable now; null while not running. */
  url: string | null;
  /** The same place as engine, node and port; absent while not running. */
  address?: InstanceAddress;
  image: string;
}

/** The engine part of an instance address: the adapter's kind and the host of its Engine API URL. */
export function engineId(kind: "docker" | "swarm", engineUrl: string): string {
  return `${kind}:${new URL(engineUrl).host}`;
}

/** The direct URL of an address (`http://<node>:<port>`, IPv6 nodes in brackets). */
export function addressUrl(address: Pick<InstanceAddress, "node" | "port">): string {
  const node = address.node.includes(":") && !address.node.startsWith("[") ? `[${address.node}]` : address.node;
  return `http://${node}:${address.port}`;
}

/** One line of an instance's own output, as the engine timestamps it. */
export interface LogLine {
  /** When the engine read the line, ms since the epoch. */
  at: number;
  stream: "stdout" | "stderr";
  /** The line without its newline. */
  text: string;
}

export interface LogOptions {
  /** Keep the stream open and yield lines as they are printed. */
  follow?: boolean;
  /** Only lines printed at or after this moment (ms since the epoch). */
  since?: number;
  /** Only the last `tail` lines (before following). */
  tail?: number;
  /** Ends the stream (a follower went away). */
  signal?: AbortSignal;
}

/** What the app asks its instance's health check to be (the app's health check settings). */
export interface HealthCheckSpec {
  /** HTTP path probed on the instance's port, e.g. `/` or `/healthz`. */
  path: string;
  /** `any`: any HTTP answer is healthy; `2xx-3xx`: only those statuses. */
  expect: "any" | "2xx-3xx";
  timeoutSeconds: number;
  /** Failures during this long after a start do not count. */
  graceSeconds: number;
  intervalSeconds: number;
  /** Failures in a row that make the instance unhealthy. */
  retries: number;
}

/** What the engine reports of an instance's process, for the app's `instance` field. */
export interface InstanceRunState {
  id: string;
  /** The engine's own word (`running`, `restarting`, `exited`, ...). */
  status: "created" | "running" | "restarting" | "paused" | "exited" | "dead" | "removing";
  /** Times the engine restarted the process after it exited non-zero. */
  restarts: number;
  /** The last exit code; null while running (the engine resets it on each start) or before it ever exited. */
  exitCode: number | null;
  /** Whether the last exit was the kernel's out-of-memory kill. */
  oomKilled: boolean;
  /** When the instance was created, in ms since the epoch. */
  createdAt: number;
}

/** An instance as the engine lists it for the reconciler (src/apps/reconcile.ts). */
export interface ListedInstance {
  id: string;
  /** The name the control plane gave it (InstanceSpec.name). */
  name: string;
  labels: Record<string, string>;
  /** When the engine created it, ms since the epoch. */
  createdAt: number;
}

/** A network or an image (`repository:tag`) as the engine lists it, with when it was created. */
export interface ListedObject {
  name: string;
  createdAt: number;
}
