/**
 * The container engine as the control plane sees it, as two contracts in the style of
 * cloudflare/workers-oauth-provider's storage interface: every member is required and documented,
 * and an adapter that cannot do something implements it anyway, returning the documented value
 * ("nothing", "fits") rather than leaving the member out, so no caller branches on what an adapter
 * has. `ImageBuilder` turns a build context into an image; `InstanceEngine` runs app instances
 * from images. The level is "instances", not "containers on this host", so an adapter for many
 * machines fits the same contract: `docker.ts` (one Docker Engine) and `swarm.ts` (Docker Swarm
 * services). Both pass the one conformance suite in `test/runtime/conformance.ts`.
 */
import type { InstanceStats } from "./stats";
import type { BuildOutcome, BuildSpec, Instance, InstanceRunState, InstanceSpec, InstanceState, ListedInstance, ListedObject, LogLine, LogOptions } from "./specs";

export * from "./specs";
export * from "./errors";
export type { InstanceStats } from "./stats";

/** Builds images and keeps track of them: what a deploy's build step and the image pruning need. */
export interface ImageBuilder {
  /** Builds an image; a failing build is an outcome, not a throw (RuntimeUnavailableError for the engine's own failures). */
  build(spec: BuildSpec): Promise<BuildOutcome>;
  /** Whether an image exists (a deploy retried after its build reuses it). */
  hasImage(image: string): Promise<boolean>;
  /** The engine's id of an image (`sha256:...`), or null when it does not exist (recorded with the deploy). */
  imageDigest(image: string): Promise<string | null>;
  /** Removes an image; a missing one is fine. */
  removeImage(image: string): Promise<void>;
  /** References (`repository:tag`) of every image named `repository`, whatever its tag. */
  images(repository: string): Promise<string[]>;
  /** Image references (`repository:tag`) whose repository starts with `prefix`, with their age (the reconciler's view). */
  listImages(prefix: string): Promise<ListedObject[]>;
}

/** Runs, replaces, stops and removes app instances, and reports on them. */
export interface InstanceEngine {
  /** Reaches the engine; throws RuntimeUnavailableError when it cannot. */
  ping(): Promise<{ apiVersion: string }>;
  /** What the operator should fix on the engine, one sentence each (GET /admin/api/runtime); [] when nothing. */
  report(): Promise<string[]>;
  /**
   * Creates and starts an instance; resolves once the engine reports it started (not probed).
   * Rejects with InstanceExitedError when the process has already ended.
   */
  start(spec: InstanceSpec): Promise<Instance>;
  /**
   * Runs `spec` as the next generation of the app's instance `previous` (null: the app has none):
   * the one way the launch path (src/apps/launch.ts) puts a new instance in front of an app.
   * Resolves once the new generation runs (not probed); InstanceExitedError as for `start`.
   * One engine starts a new instance beside `previous`, which keeps serving until the switch's
   * retire row removes it. Swarm updates the service `previous` in place (same id, a new address;
   * the new task starts before the old one stops), or starts one when `previous` is null or gone.
   */
  replace(previous: string | null, spec: InstanceSpec): Promise<Instance>;
  /**
   * Undoes `replace(previous, ...)`, which gave instance `id`, when its generation is not kept (it
   * did not answer, or another change switched the app first): nothing of it is left and
   * `previous` runs as before. Where the engine switched in place (`id === previous`, Swarm) the
   * instance goes back to what it ran before; otherwise `id` is removed (on one engine `previous`
   * never stopped, so `revert(previous, previous)` does nothing there).
   */
  revert(id: string, previous: string | null): Promise<void>;
  /** The instance's state (running, where, which image), or null when it does not exist. */
  inspect(id: string): Promise<InstanceState | null>;
  /** Its process's state, restarts, exit code and OOM kill, or null when it does not exist. */
  state(id: string): Promise<InstanceRunState | null>;
  /** Restarts the same instance (same image, same variables); its URL may change. InstanceExitedError as for start. */
  restart(id: string): Promise<Instance>;
  /** Stops an instance; a missing or stopped one is fine. */
  stop(id: string): Promise<void>;
  /**
   * Removes an instance (stopping it first); a missing one is fine. `graceSeconds`: its process
   * gets SIGTERM and this long to exit before it is killed (none: killed at once).
   */
  remove(id: string, options?: { graceSeconds?: number }): Promise<void>;
  /** The instance's own output (stdout and stderr interleaved as text), the last `tail` lines; "" when it does not exist. */
  logs(id: string, options?: { tail?: number }): Promise<string>;
  /**
   * The instance's output as timestamped lines with their stream; with `follow`, lines as they are
   * printed until `signal` aborts or the instance is removed. Null when the instance does not exist.
   */
  logLines(id: string, options?: LogOptions): Promise<AsyncIterable<LogLine> | null>;
  /**
   * The instance's CPU, memory and restart count now (docs/metrics.md); null when it is gone (Swarm:
   * also while no task of it runs, or when its node's engine cannot be asked, swarm-stats.ts).
   */
  stats(id: string): Promise<InstanceStats | null>;
  /**
   * Ids of every instance carrying all these labels, running or not: what the engine holds,
   * whatever the records say (Delete removes an app's instances by its label).
   */
  instances(labels: Record<string, string>): Promise<string[]>;
  /** Every instance carrying label `key` (with `value`, when given), running or not, for the reconciler. */
  listInstances(label: { key: string; value?: string }): Promise<ListedInstance[]>;
  /**
   * Creates a network for one app's instances unless it exists (same name: nothing happens). It
   * reaches the internet; other apps' networks cannot reach it.
   */
  ensureNetwork(name: string, labels: Record<string, string>): Promise<void>;
  /** Removes a network (its instances removed first); a missing one is fine. */
  removeNetwork(name: string): Promise<void>;
  /** Networks whose name starts with `prefix`, with their age (the reconciler's view). */
  listNetworks(prefix: string): Promise<ListedObject[]>;
  /**
   * Every running instance that has the label `label` (any value), with the bytes its writable layer
   * holds (src/apps/disk-watch.ts). An engine that cannot measure them answers [] (Swarm: the
   * manager does not see the writable layers of tasks on other nodes).
   */
  writableBytes(label: string): Promise<{ id: string; bytes: number }[]>;
  /**
   * Whether a plan's memory fits on the engine's machines now (checked before an app's first
   * deploy). One engine reserves nothing ahead, so it answers `{fits: true}` (the plan's limit is
   * enforced by the kernel when the instance runs).
   */
  capacity(memoryBytes: number): Promise<{ fits: true } | { fits: false; message: string }>;
}

/** The whole runtime the control plane is given: one adapter is both. */
export type ContainerRuntime = ImageBuilder & InstanceEngine;
