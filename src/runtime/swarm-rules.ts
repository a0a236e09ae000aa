/**
 * Pure rules of the Swarm adapter (no I/O): which task of a service is the instance, where it
 * answers, which host port a new generation publishes, and what a push stream reported.
 */

import { pickPort } from "./port-range";
import type { HealthCheckSpec, PortRange } from "./types";

export type { PortRange } from "./types";

export const DEFAULT_PORT_RANGE: PortRange = { first: 20000, last: 29999 };

/** Container label carrying the host port of the service generation a task belongs to. */
export const GENERATION_LABEL = "cp.port";

/** The subset of a `GET /tasks` entry read here. */
export interface SwarmTask {
  ID: string;
  CreatedAt?: string;
  NodeID?: string;
  DesiredState?: string;
  Spec?: { ContainerSpec?: { Labels?: Record<string, string> } };
  Status?: {
    State?: string;
    Err?: string;
    ContainerStatus?: { ContainerID?: string; ExitCode?: number };
    PortStatus?: { Ports?: { TargetPort?: number; PublishedPort?: number }[] };
  };
}

/** The scheduler's "host-mode port already in use" and the node's "bind: address already in use". */
const PORT_TAKEN = /port already in use|address already in use|port is already allocated/i;

/** Task states after which the task never runs again. */
const ENDED = new Set(["complete", "failed", "shutdown", "rejected", "orphaned", "remove"]);

export type TaskOutcome =
  | { kind: "running"; task: SwarmTask; port: number }
  /** Something else holds the port on the node (another program, or a service created at once). */
  | { kind: "portTaken"; reason: string }
  | { kind: "exited"; exitCode: number | null }
  | { kind: "refused"; reason: string }
  | { kind: "waiting"; state: string };

/**
 * Where the generation publishing `port` stands, from the service's tasks: running (with the task
 * whose port answers), ended by its own process (the app's fault), refused by the swarm (image
 * pull, no node: not the app's), or still on its way.
 */
export function generationOutcome(tasks: SwarmTask[], port: number): TaskOutcome {
  const mine = tasks.filter((t) => t.Spec?.ContainerSpec?.Labels?.[GENERATION_LABEL] === String(port));
  const running = mine.find((t) => t.DesiredState === "running" && t.Status?.State === "running" && publishedPort(t) === port);
  if (running) return { kind: "running", task: running, port };
  const clash = mine.find((t) => PORT_TAKEN.test(t.Status?.Err ?? ""));
  if (clash) return { kind: "portTaken", reason: clash.Status!.Err! };
  const failed = mine.find((t) => t.Status?.State === "failed" || t.Status?.State === "complete");
  if (failed) {
    const code = failed.Status?.ContainerStatus?.ExitCode;
    if (typeof code === "number") return { kind: "exited", exitCode: code };
    return { kind: "refused", reason: failed.Status?.Err ?? "the task failed" };
  }
  const rejected = mine.find((t) => t.Status?.State === "rejected");
  if (rejected) return { kind: "refused", reason: rejected.Status?.Err ?? "the swarm rejected the task" };
  const pending = mine.find((t) => !ENDED.has(t.Status?.State ?? ""));
  const state = pending?.Status?.State ?? "new";
  return { kind: "waiting", state: pending?.Status?.Err ? `${state}: ${pending.Status.Err}` : state };
}

/** Whether any task is still up or on its way up (so a stop has not finished). */
export function anyTaskActive(tasks: SwarmTask[]): boolean {
  return tasks.some((t) => !ENDED.has(t.Status?.State ?? "new"));
}

/** The host port a task publishes, once the node reports it. */
export function publishedPort(task: SwarmTask): number | null {
  const port = task.Status?.PortStatus?.Ports?.find((p) => typeof p.PublishedPort === "number" && p.PublishedPort > 0);
  return port?.PublishedPort ?? null;
}

/**
 * A port of the range that no service publishes now, from a random point of the range (the one
 * `pickPort`): two control planes picking at once rarely collide (the swarm refuses a clash,
 * leaving the task pending, never a wrong route).
 */
export function swarmPort(used: Iterable<number>, range: PortRange, random: () => number = Math.random): number | null {
  const size = range.last - range.first + 1;
  return pickPort(range, new Set(used), range.first + Math.floor(random() * size) - 1);
}

/** The subset of a `GET /nodes` entry read here. */
export interface SwarmNode {
  ID: string;
  Spec?: { Availability?: string; Labels?: Record<string, string> };
  Status?: { State?: string; Addr?: string };
  ManagerStatus?: { Addr?: string };
  Description?: { Hostname?: string; Resources?: { MemoryBytes?: number; NanoCPUs?: number } };
}

/** Node label an operator sets when instances on a node are reached at another address. */
export const ADDRESS_LABEL = "cp.address";

/**
 * The address at which a node's published ports are reached: the operator's `cp.address` label,
 * else the node's own address (a manager may report 0.0.0.0 there; its manager address then).
 */
export function nodeAddress(node: SwarmNode): string | null {
  const label = node.Spec?.Labels?.[ADDRESS_LABEL]?.trim();
  if (label) return label;
  const addr = node.Status?.Addr;
  if (addr && addr !== "0.0.0.0") return addr;
  const manager = node.ManagerStatus?.Addr;
  return manager ? manager.replace(/:\d+$/, "") : null;
}

/** The result digest of a push stream (`{aux: {Digest}}`) or its first error. */
export function pushResult(messages: unknown[]): { digest: string } | { error: string } {
  let digest: string | undefined;
  for (const message of messages) {
    if (!message || typeof message !== "object") continue;
    const m = message as { aux?: { Digest?: unknown }; error?: unknown; errorDetail?: { message?: unknown } };
    const error = typeof m.error === "string" ? m.error : typeof m.errorDetail?.message === "string" ? m.errorDetail.message : undefined;
    if (error !== undefined) return { error };
    if (typeof m.aux?.Digest === "string") digest = m.aux.Digest;
  }
  return digest ? { digest } : { error: "the registry did not report the pushed image's digest" };
}

/** `X-Registry-Auth`: base64url of the JSON credentials, as the Engine API takes them (`{}`: none). */
export function registryAuthHeader(auth: { username: string; password: string } | null, serverAddress: string): string {
  const json = auth ? JSON.stringify({ username: auth.username, password: auth.password, serveraddress: serverAddress }) : "{}";
  const bytes = new TextEncoder().encode(json);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_");
}

/** Splits `name:tag` (the name may hold a registry host with a port) into its two parts. */
export function splitReference(image: string): { name: string; tag: string } {
  const slash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  if (colon > slash) return { name: image.slice(0, colon), tag: image.slice(colon + 1) };
  return { name: image, tag: "latest" };
}

/** A task's `ContainerSpec.Healthcheck` (durations in nanoseconds), as the Engine API takes it. */
export interface TaskHealthcheck {
  Test: string[];
  Interval: number;
  Timeout: number;
  StartPeriod: number;
  Retries: number;
}

/**
 * The app's health check as the task's own: the swarm then counts a new task as running only once
 * it is healthy (so a start-first update keeps the old task until the new one answers) and replaces
 * a task that turns unhealthy. The probe runs inside the instance with its shell and `wget` (or
 * `curl`): `2xx-3xx` fails on an error status, `any` passes on any HTTP answer; the engine ends a
 * check that takes longer than `Timeout`. The path is quoted for the shell, so it cannot add a command.
 */
export function taskHealthcheck(check: HealthCheckSpec, port: number): TaskHealthcheck {
  const url = shellQuote(`http://127.0.0.1:${port}${check.path.startsWith("/") ? check.path : `/${check.path}`}`);
  const seconds = (s: number) => Math.max(1, Math.round(s)) * 1e9;
  // No timeout flags (busybox's wget has none): the engine ends a check after `Timeout` itself.
  const probe =
    check.expect === "2xx-3xx"
      ? `wget -q -O /dev/null ${url} || curl -fsS -o /dev/null ${url}`
      : `wget -S -O /dev/null ${url} 2>&1 | grep -q 'HTTP/' || curl -sS -o /dev/null ${url}`;
  return {
    Test: ["CMD-SHELL", `${probe} || exit 1`],
    Interval: seconds(check.intervalSeconds),
    Timeout: seconds(check.timeoutSeconds),
    StartPeriod: Math.max(0, Math.round(check.graceSeconds)) * 1e9,
    Retries: Math.max(1, Math.round(check.retries)),
  };
}

/** `text` in single quotes for a POSIX shell (a quote inside becomes `'\''`). */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * Restarts the swarm makes after a task exits non-zero, within RESTART_WINDOW_NS. Kept under the
 * swarm's default task history (5 tasks per slot), so every restart stays countable from `/tasks`.
 */
export const RESTART_ATTEMPTS = 3;
export const RESTART_WINDOW_NS = 120e9;

/** Task states of a task on its way to running (created, scheduled, pulling, starting). */
const STARTING = new Set(["new", "pending", "assigned", "accepted", "preparing", "ready", "starting"]);

/** What a service's tasks say of its process, before the OOM flag (which only a node's engine knows). */
export interface TaskRunState {
  status: "created" | "running" | "restarting" | "exited";
  /** Tasks of this generation that failed and that the restart policy replaced. */
  restarts: number;
  /** The exit code of the last task that ended; null while running or before any ended. */
  exitCode: number | null;
  /** The container of the last task that ended, whose engine may tell an OOM kill; null if none. */
  ended: { containerId: string; nodeId: string | null } | null;
}

/**
 * A service's process state from its `/tasks` (an instance is a one-replica service; each restart
 * by the swarm is a new task in the same slot). Only the tasks of the generation publishing `port`
 * count, so an update or Restart starts at zero restarts, as a new container would. The newest task
 * decides: running (even while being stopped, as an engine reports a stopping container); on its
 * way up (restarting when a task of the generation failed before it; running while an update's new
 * task starts and the previous generation's task still serves; created otherwise); ended and not
 * desired to run any more (exited: the restart policy gave up, or the process ended with 0 under
 * `on-failure`, or the service was scaled to zero); ended but still desired to run (restarting:
 * the orchestrator has yet to replace it).
 */
export function taskRunState(tasks: SwarmTask[], port?: number): TaskRunState {
  const labelled = port === undefined ? [] : tasks.filter((t) => t.Spec?.ContainerSpec?.Labels?.[GENERATION_LABEL] === String(port));
  const mine = (labelled.length > 0 ? labelled : tasks).slice().sort((a, b) => createdAt(a) - createdAt(b));
  const latest = mine.at(-1);
  const failed = mine.filter((t) => t.Status?.State === "failed");
  const lastEnded = mine.filter((t) => ENDED.has(t.Status?.State ?? "") && t.Status?.ContainerStatus?.ContainerID).at(-1);
  const restarts = failed.filter((t) => t !== latest).length;
  const ended = lastEnded ? { containerId: lastEnded.Status!.ContainerStatus!.ContainerID!, nodeId: lastEnded.NodeID ?? null } : null;
  const exitCode = lastEnded?.Status?.ContainerStatus?.ExitCode ?? null;
  if (!latest) return { status: "exited", restarts: 0, exitCode: null, ended: null };
  const state = latest.Status?.State ?? "new";
  if (state === "running") return { status: "running", restarts, exitCode: null, ended };
  if (STARTING.has(state)) {
    // A task starting while an earlier one of the generation failed is the restart policy at work.
    if (failed.length > 0) return { status: "restarting", restarts, exitCode, ended };
    // An update's new task on its way up while the previous generation's task still serves.
    const serving = tasks.some((t) => t.Status?.State === "running" && t.DesiredState === "running");
    return { status: serving ? "running" : "created", restarts, exitCode: null, ended };
  }
  const desired = latest.DesiredState ?? "shutdown";
  if (state === "failed" && (desired === "running" || desired === "ready")) return { status: "restarting", restarts, exitCode, ended };
  return { status: "exited", restarts, exitCode, ended };
}

function createdAt(task: SwarmTask): number {
  const at = task.CreatedAt ? Date.parse(task.CreatedAt) : Number.NaN;
  return Number.isNaN(at) ? 0 : at;
}

/**
 * The `POST /networks/create` body of an app's own network on a swarm: an overlay that only the
 * app's tasks join (not attachable, so no container started outside a service can), reaching the
 * internet through each node's gateway bridge, and encrypted between nodes (IPsec, which needs the
 * kernel's ESP and AES-GCM support on every node) unless `encrypted` is false.
 */
export function appOverlaySpec(name: string, labels: Record<string, string>, encrypted: boolean): Record<string, unknown> {
  return { Name: name, Driver: "overlay", CheckDuplicate: true, Attachable: false, Internal: false, Labels: labels, Options: encrypted ? { encrypted: "" } : {} };
}
