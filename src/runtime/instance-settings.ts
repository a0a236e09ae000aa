/**
 * The engine settings of an app instance, as pure functions: what a plan's limits become in
 * Docker's `HostConfig`, and when an instance that keeps exiting counts as crashed. The Docker
 * adapter sends exactly `instanceHostConfig`; the conformance suite reads it back from dockerd.
 */
import type { InstanceLimits } from "./types";

/**
 * Capabilities taken away from every instance, on top of what Docker already withholds: raw
 * sockets (packet spoofing on the shared bridge), device nodes, the audit log, file
 * capabilities, chroot and capability juggling. Common images still start without them.
 */
export const CAP_DROP = ["NET_RAW", "MKNOD", "AUDIT_WRITE", "SETFCAP", "SYS_CHROOT", "SETPCAP"] as const;

/**
 * What an instance keeps of Docker's default set, because common images need it to start
 * (entrypoints that chown their data directory, then drop to an unprivileged user; servers that
 * bind port 80; process managers that signal their children).
 */
export const CAP_KEPT = ["CHOWN", "SETUID", "SETGID", "DAC_OVERRIDE", "FOWNER", "FSETID", "NET_BIND_SERVICE", "KILL"] as const;

/** Processes (and threads) an instance may have when its limits name none. */
export const DEFAULT_PIDS_LIMIT = 128;

/** The engine restarts a process that exits non-zero, at most this many times in a row. */
export const MAX_RESTARTS = 5;

/** Each instance's output kept by the engine: at most `max-file` files of `max-size`. */
export const LOG_MAX_SIZE = "5m";
export const LOG_MAX_FILE = "2";

/** Where and how the app's one HTTP port is published. */
export interface PortBinding {
  /** The port the app listens on inside the instance. */
  containerPort: number;
  /** The host address the port is bound to: the address the Worker reaches it at. */
  hostIp: string;
  /** The host port; 0 lets the engine pick one. */
  hostPort: number;
}

/** The `HostConfig` part of `POST /containers/create` for one instance. */
export interface InstanceHostConfig {
  Memory: number;
  MemorySwap: number;
  NanoCpus: number;
  PidsLimit: number;
  CapDrop: string[];
  SecurityOpt: string[];
  Init: boolean;
  Privileged: false;
  ReadonlyRootfs: false;
  NetworkMode: string;
  PortBindings: Record<string, { HostIp: string; HostPort: string }[]>;
  RestartPolicy: { Name: "on-failure"; MaximumRetryCount: number };
  LogConfig: { Type: "json-file"; Config: { "max-size": string; "max-file": string } };
  Binds: [];
  Mounts: [];
  Devices: [];
}

/**
 * Plan limits and port binding -> the instance's `HostConfig`. Memory equals MemorySwap (no swap
 * beyond the plan's memory); never privileged, never the host's network, no bind mounts, no
 * devices; `network` is the app's own bridge network (Docker's default bridge when absent).
 */
export function instanceHostConfig(limits: InstanceLimits, port: PortBinding, network?: string): InstanceHostConfig {
  return {
    Memory: limits.memoryBytes,
    MemorySwap: limits.memoryBytes,
    NanoCpus: Math.round(limits.cpus * 1e9),
    PidsLimit: limits.pids ?? DEFAULT_PIDS_LIMIT,
    CapDrop: [...CAP_DROP],
    SecurityOpt: ["no-new-privileges"],
    Init: true,
    Privileged: false,
    ReadonlyRootfs: false,
    NetworkMode: network ?? "bridge",
    PortBindings: { [`${port.containerPort}/tcp`]: [{ HostIp: port.hostIp, HostPort: port.hostPort > 0 ? String(port.hostPort) : "" }] },
    RestartPolicy: { Name: "on-failure", MaximumRetryCount: MAX_RESTARTS },
    LogConfig: { Type: "json-file", Config: { "max-size": LOG_MAX_SIZE, "max-file": LOG_MAX_FILE } },
    Binds: [],
    Mounts: [],
    Devices: [],
  };
}

/** What the engine says about an instance's process (Docker: `State` and `RestartCount`). */
export interface ObservedProcess {
  status: "created" | "running" | "restarting" | "paused" | "exited" | "dead" | "removing";
  restarts: number;
  /** When the instance was created, in ms. */
  createdAt: number;
}

/** The rule for "crashed": this many restarts within this window, or the engine gave up. */
export interface CrashRule {
  maxRestarts: number;
  windowMs: number;
}

export const CRASH_RULE: CrashRule = { maxRestarts: MAX_RESTARTS, windowMs: 10 * 60 * 1000 };

export type InstanceHealth = "running" | "restarting" | "crashed";

/**
 * The health of an instance that should be serving, from what the engine reports. A process
 * that is not running and will not be restarted (exited, dead) has crashed, and so has one the
 * engine has restarted `maxRestarts` times within `windowMs` of its creation (a crash loop); one
 * waiting for its next restart with fewer is `restarting`, as is one not yet started.
 */
export function instanceHealth(p: ObservedProcess, now: number, rule: CrashRule = CRASH_RULE): InstanceHealth {
  if (p.status === "running") return "running";
  if (p.status === "restarting" || p.status === "created" || p.status === "paused") {
    return p.restarts >= rule.maxRestarts && now - p.createdAt <= rule.windowMs ? "crashed" : "restarting";
  }
  return "crashed";
}
