/**
 * The runtime the Worker uses: the Docker adapter (one engine) or the Swarm adapter, chosen by
 * RUNTIME_KIND and reached with the configured credentials (connect.ts); both implement the
 * contract in types.ts.
 */
import { getConfig } from "../config";
import { database } from "../db/client";
import { runtimeFromEnv } from "./connect";
import { engineKey, withPortTable } from "./ports";
import type { ContainerRuntime } from "./types";

/**
 * The Worker's runtime: the configured engine reached with its credentials (src/runtime/connect.ts).
 * On one Docker engine, instances' host ports are allocated from INSTANCE_PORT_RANGE in the
 * `instance_ports` table and published on INSTANCE_BIND_ADDRESS; the Swarm adapter picks a port of
 * the range per service generation on the node that runs it (docs/architecture.md says why not
 * from the table). Null when no engine is set.
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
