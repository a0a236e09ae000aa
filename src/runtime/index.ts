/**
 * Chooses the container runtime from configuration. Only the Docker Engine API exists today; the
 * URL is the engine's HTTP base (in development, the localhost forwarder to the Docker socket).
 */
import { DockerRuntime } from "./docker";
import type { ContainerRuntime } from "./types";

/** The runtime for an engine URL such as `http://127.0.0.1:2375`, or null when none is configured. */
export function runtimeFromUrl(url: string | undefined): ContainerRuntime | null {
  const trimmed = url?.trim();
  if (!trimmed) return null;
  return new DockerRuntime({ url: trimmed });
}

export { DockerRuntime, type DockerRuntimeOptions } from "./docker";
export * from "./types";
export { runtimeFromConfig, runtimeFromEnv } from "./connect";
export { SwarmRuntime, type SwarmRuntimeOptions } from "./swarm";
