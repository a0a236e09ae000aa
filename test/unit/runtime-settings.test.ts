/**
 * The deployed Worker reaches the engine safely: the Engine API only over HTTPS with credentials
 * (a Cloudflare Access service token from secrets, or a client certificate binding); a plain-http
 * RUNTIME_URL to another machine is refused at start-up with a message saying why.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config";
import { engineFetch, runtimeFromConfig } from "../../src/runtime/connect";
import { DockerRuntime } from "../../src/runtime/docker";
import { SwarmRuntime } from "../../src/runtime/swarm";

const secrets = {
  LINK_SIGNING_KEYS: "k1:0123456789abcdef0123456789abcdef",
  ENV_ENCRYPTION_KEY: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
};
const access = { RUNTIME_ACCESS_CLIENT_ID: "abc.access", RUNTIME_ACCESS_CLIENT_SECRET: "s3cret" };
const mtls = { RUNTIME_MTLS: { fetch: () => Promise.resolve(new Response()) } };

describe("engine settings", () => {
  it.each([
    ["no engine", {}],
    ["plain http to this machine", { RUNTIME_URL: "http://127.0.0.1:2375" }],
    ["plain http to localhost", { RUNTIME_URL: "http://localhost:2375" }],
    ["plain http to [::1]", { RUNTIME_URL: "http://[::1]:2375" }],
    ["https with an Access service token", { RUNTIME_URL: "https://engine.example.net", ...access }],
    ["https with a client certificate binding", { RUNTIME_URL: "https://engine.example.net", ...mtls }],
    ["a swarm with its registry", { RUNTIME_URL: "https://engine.example.net", ...access, RUNTIME_KIND: "swarm", REGISTRY: "registry.example.net:5000/apps" }],
    ["registry credentials in pairs", { REGISTRY_USERNAME: "ci", REGISTRY_PASSWORD: "pw" }],
    ["another port range", { INSTANCE_PORT_RANGE: "30000-30999" }],
    ["a registry API over https", { REGISTRY_API_URL: "https://registry.example.net/" }],
    ["a node proxy naming the node", { NODE_PROXY_URL: "https://{node}" }],
    ["a node proxy with a port", { NODE_PROXY_URL: "https://proxy-{node}:8443/" }],
    ["each node's engine naming the node", { SWARM_NODE_ENGINE_URL: "https://engine-{node}:2376" }],
    ["placement constraints", { SWARM_CONSTRAINTS: "node.labels.apps==on, node.role!=manager" }],
    ["a probe image in the registry", { SWARM_PROBE_IMAGE: "registry.example.net:5000/probe:1" }],
    ["unencrypted app networks on a swarm", { SWARM_ENCRYPT_NETWORKS: "false" }],
    ["a test's small disk allowance", { DISK_ALLOWANCE_OVERRIDE_BYTES: "10485760" }],
  ] as [string, Record<string, unknown>][])("accepts %s", (_name, vars) => {
    expect(() => parseConfig({ ...secrets, ...vars })).not.toThrow();
  });

  it.each([
    ["plain http to another machine", { RUNTIME_URL: "http://10.0.0.5:2375" }, /RUNTIME_URL must be https for an engine on another machine, got "http:\/\/10\.0\.0\.5:2375": the Docker Engine API gives root on its host/],
    ["plain http to another machine, even with a token", { RUNTIME_URL: "http://engine.example.net", ...access }, /RUNTIME_URL must be https for an engine on another machine/],
    ["plain http to a name that only starts like loopback", { RUNTIME_URL: "http://127.0.0.1.evil.example:2375" }, /RUNTIME_URL must be https/],
    ["https to another machine without credentials", { RUNTIME_URL: "https://engine.example.net" }, /is on another machine and no credentials are set: .* RUNTIME_ACCESS_CLIENT_ID and RUNTIME_ACCESS_CLIENT_SECRET .* RUNTIME_MTLS/],
    ["half an Access token", { RUNTIME_URL: "https://engine.example.net", RUNTIME_ACCESS_CLIENT_ID: "abc" }, /RUNTIME_ACCESS_CLIENT_ID and RUNTIME_ACCESS_CLIENT_SECRET go together/],
    ["half the registry credentials", { REGISTRY_PASSWORD: "pw" }, /REGISTRY_USERNAME and REGISTRY_PASSWORD go together/],
    ["a swarm without a registry", { RUNTIME_KIND: "swarm" }, /REGISTRY must be set when RUNTIME_KIND is swarm/],
    ["an unknown kind", { RUNTIME_KIND: "nomad" }, /RUNTIME_KIND must be one of docker, swarm, got "nomad"/],
    ["a registry URL instead of a host", { REGISTRY: "https://registry.example.net" }, /REGISTRY must be a registry host/],
    ["a registry API over plain http to another machine", { REGISTRY_API_URL: "http://registry.example.net" }, /REGISTRY_API_URL must be an https address/],
    ["a port range upside down", { INSTANCE_PORT_RANGE: "29999-20000" }, /INSTANCE_PORT_RANGE must be <first>-<last>/],
    ["a port range over privileged ports", { INSTANCE_PORT_RANGE: "80-9000" }, /INSTANCE_PORT_RANGE must be/],
    ["a node proxy over plain http", { NODE_PROXY_URL: "http://{node}" }, /NODE_PROXY_URL must be an https URL whose host names the node as \{node\}/],
    ["a node proxy that does not name the node", { NODE_PROXY_URL: "https://proxy.example.net" }, /NODE_PROXY_URL must be/],
    ["a node proxy with a path", { NODE_PROXY_URL: "https://{node}/apps" }, /NODE_PROXY_URL must be/],
    ["nodes' engines over plain http", { SWARM_NODE_ENGINE_URL: "http://{node}:2375" }, /SWARM_NODE_ENGINE_URL must be an https URL whose host names the node as \{node\}/],
    ["a constraint that is not one", { SWARM_CONSTRAINTS: "node.labels.apps" }, /SWARM_CONSTRAINTS must be comma-separated placement constraints such as node.labels.apps==on, got "node.labels.apps"/],
    ["a constraint with a shell in it", { SWARM_CONSTRAINTS: "node.role==$(id)" }, /SWARM_CONSTRAINTS must be/],
    ["a probe image with a space in it", { SWARM_PROBE_IMAGE: "busybox; id" }, /SWARM_PROBE_IMAGE must be an image reference such as registry\.example\.net\/probe:1, got "busybox; id"/],
    ["a disk allowance that is not a number of bytes", { DISK_ALLOWANCE_OVERRIDE_BYTES: "10MB" }, /DISK_ALLOWANCE_OVERRIDE_BYTES must be a whole number of bytes \(0: each plan's own\), got "10MB"/],
    ["an encryption switch that is neither true nor false", { SWARM_ENCRYPT_NETWORKS: "maybe" }, /SWARM_ENCRYPT_NETWORKS must be true or false, got "maybe"/],
  ] as [string, Record<string, unknown>, RegExp][])("refuses %s", (_name, vars, message) => {
    expect(() => parseConfig({ ...secrets, ...vars })).toThrow(message);
  });

  it("never puts a secret in the refusal", () => {
    const error = (() => {
      try {
        parseConfig({ ...secrets, RUNTIME_URL: "https://engine.example.net", RUNTIME_ACCESS_CLIENT_ID: "id-1", REGISTRY_PASSWORD: "registry-pw-123" });
      } catch (e) {
        return String(e);
      }
      return "";
    })();
    expect(error).toMatch(/go together/);
    expect(error).not.toContain("registry-pw-123");
  });
});

describe("runtimeFromConfig and engineFetch", () => {
  it("sends the Access service token's headers on every engine call, and nothing without one", async () => {
    const seen: Headers[] = [];
    const base: typeof fetch = async (_input, init) => {
      seen.push(new Headers(init?.headers));
      return new Response("OK", { headers: { "Api-Version": "1.41" } });
    };
    const config = parseConfig({ ...secrets, RUNTIME_URL: "https://engine.example.net", ...access });
    await runtimeFromConfig(config, base)!.ping();
    expect(seen[0]?.get("CF-Access-Client-Id")).toBe("abc.access");
    expect(seen[0]?.get("CF-Access-Client-Secret")).toBe("s3cret");
    await engineFetch(parseConfig(secrets), base)("https://x/_ping", { headers: { A: "1" } });
    expect(seen[1]?.get("CF-Access-Client-Id")).toBeNull();
    expect(seen[1]?.get("A")).toBe("1");
  });

  it("chooses the adapter by RUNTIME_KIND, and none without an engine", () => {
    expect(runtimeFromConfig(parseConfig(secrets))).toBeNull();
    expect(runtimeFromConfig(parseConfig({ ...secrets, RUNTIME_URL: "http://127.0.0.1:2375" }))).toBeInstanceOf(DockerRuntime);
    expect(runtimeFromConfig(parseConfig({ ...secrets, RUNTIME_URL: "http://127.0.0.1:2375", RUNTIME_KIND: "swarm", REGISTRY: "127.0.0.1:5000" }))).toBeInstanceOf(SwarmRuntime);
  });
});
