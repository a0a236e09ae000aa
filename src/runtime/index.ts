/**
 * Chooses the container runtime from configuration. Only the Docker Engine API exists today; the
 * URL is the engine's HTTP base (in development, the localhost forwarder to the Docker socket).
 */
import { getConfig } from "../config";
import { database } from "../db/client";
import { runtimeFromEnv } from "./connect";
import { DockerRuntime } from "./docker";
import { engineKey, withPortTable } from "./ports";
import type { ContainerRuntime } from "./types";

/** The runtime for an engine URL such as `http://127.0.0.1:2375`, or null when none is configured. */
export function runtimeFromUrl(url: string | undefined, options: { bindAddress?: string } = {}): ContainerRuntime | null {
  const trimmed = url?.trim();
  if (!trimmed) return null;
  return new DockerRuntime({ url: trimmed, ...(options.bindAddress ? { bindAddress: options.bindAddress } : {}) });
}

/**
 * The Worker's runtime: the configured engine reached with its credentials (src/runtime/connect.ts).
 * On one Docker engine, instances' host ports are allocated from INSTANCE_PORT_RANGE in D1 and
 * published on INSTANCE_BIND_ADDRESS; the swarm adapter picks a port of the range per generation
 * on the node that runs it. Null when no engine is set.
 */
export function runtimeFor(env: Env): ContainerRuntime | null {
  const runtime = runtimeFromEnv(env);
  const config = getConfig(env);
  if (!runtime || config.RUNTIME_KIND === "swarm") return runtime;
  return withPortTable(runtime, database(env), { engine: engineKey(config.RUNTIME_URL), range: config.INSTANCE_PORT_RANGE });
}

/** The network of an app's instances: created at its first launch, removed when it is deleted. */
export function appNetworkName(appId: string): string {
  return `control-plane-app-${appId}`;
}

export { DockerRuntime, type DockerRuntimeOptions } from "./docker";
export * from "./types";
export { runtimeFromConfig, runtimeFromEnv } from "./connect";
export { SwarmRuntime, type SwarmRuntimeOptions } from "./swarm";
