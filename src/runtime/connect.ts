/**
 * The runtime the Worker uses, from its settings and bindings: the Docker adapter or the Swarm
 * adapter, reaching the engine with the configured credentials. An engine behind Cloudflare Access
 * gets the service token's headers on every call; one that wants a client certificate is reached
 * through the RUNTIME_MTLS binding's `fetch`, which presents it.
 */
import { type Config, getConfig } from "../config";
import { DockerRuntime } from "./docker";
import { SwarmRuntime } from "./swarm";
import type { ContainerRuntime } from "./types";

type RuntimeConfig = Pick<
  Config,
  "RUNTIME_URL" | "RUNTIME_KIND" | "RUNTIME_BUILDER" | "REGISTRY" | "REGISTRY_API_URL" | "REGISTRY_USERNAME" | "REGISTRY_PASSWORD" | "RUNTIME_ACCESS_CLIENT_ID" | "RUNTIME_ACCESS_CLIENT_SECRET" | "INSTANCE_PORT_RANGE" | "INSTANCE_BIND_ADDRESS" | "SWARM_NODE_ENGINE_URL" | "SWARM_CONSTRAINTS" | "SWARM_PROBE_IMAGE" | "SWARM_ENCRYPT_NETWORKS"
>;

/** The runtime for this env, or null when no engine is configured. */
export function runtimeFromEnv(env: Env): ContainerRuntime | null {
  const mtls = (env as { RUNTIME_MTLS?: Fetcher }).RUNTIME_MTLS;
  return runtimeFromConfig(getConfig(env), mtls ? (input, init) => mtls.fetch(input, init) : undefined);
}

export function runtimeFromConfig(config: RuntimeConfig, baseFetch?: typeof fetch): ContainerRuntime | null {
  if (config.RUNTIME_URL === "") return null;
  const fetcher = engineFetch(config, baseFetch ?? ((input, init) => fetch(input, init)));
  if (config.RUNTIME_KIND === "swarm") {
    return new SwarmRuntime({
      url: config.RUNTIME_URL,
      fetch: fetcher,
      registry: config.REGISTRY,
      ...(config.REGISTRY_API_URL ? { registryApi: config.REGISTRY_API_URL } : {}),
      ...(config.REGISTRY_USERNAME ? { registryAuth: { username: config.REGISTRY_USERNAME, password: config.REGISTRY_PASSWORD } } : {}),
      portRange: config.INSTANCE_PORT_RANGE,
      constraints: config.SWARM_CONSTRAINTS,
      ...(config.SWARM_PROBE_IMAGE ? { probeImage: config.SWARM_PROBE_IMAGE } : {}),
      encryptNetworks: config.SWARM_ENCRYPT_NETWORKS,
      ...(config.SWARM_NODE_ENGINE_URL ? { nodeEngineUrl: (node: string) => config.SWARM_NODE_ENGINE_URL.replace("{node}", node) } : {}),
    });
  }
  return new DockerRuntime({
    url: config.RUNTIME_URL,
    fetch: fetcher,
    builder: config.RUNTIME_BUILDER,
    ...(config.INSTANCE_BIND_ADDRESS ? { bindAddress: config.INSTANCE_BIND_ADDRESS } : {}),
  });
}

/** `fetch` with the Access service token's headers, when one is set. */
export function engineFetch(config: Pick<Config, "RUNTIME_ACCESS_CLIENT_ID" | "RUNTIME_ACCESS_CLIENT_SECRET">, base: typeof fetch): typeof fetch {
  if (!config.RUNTIME_ACCESS_CLIENT_ID) return base;
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("CF-Access-Client-Id", config.RUNTIME_ACCESS_CLIENT_ID);
    headers.set("CF-Access-Client-Secret", config.RUNTIME_ACCESS_CLIENT_SECRET);
    return base(input, { ...init, headers });
  };
}
