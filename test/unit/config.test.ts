import { describe, expect, it } from "vitest";
import { ConfigError, SETTING_DEFAULTS, parseConfig } from "../../src/config";

const KEY_B64 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
const secrets = {
  LINK_SIGNING_KEYS: "k1:0123456789abcdef0123456789abcdef",
  ENV_ENCRYPTION_KEY: KEY_B64,
};

describe("parseConfig", () => {
  it("applies the documented defaults when variables are absent", () => {
    const config = parseConfig(secrets);
    expect(config).toMatchObject(SETTING_DEFAULTS);
    expect(SETTING_DEFAULTS).toEqual({
      EXPORT_COOLDOWN_SECONDS: 300,
      LINK_TTL_SECONDS: 1800,
      ARCHIVE_RETENTION_SECONDS: 86400,
      RATE_LIMIT_PER_MINUTE: 120,
      RATE_LIMIT_BURST: 30,
      PENDING_RETRY_AFTER_SECONDS: 2,
      IN_FLIGHT_RETRY_AFTER_SECONDS: 5,
      RUNTIME_URL: "",
      APPS_DOMAIN: "localhost",
      PROBE_TIMEOUT_SECONDS: 60,
      HEALTH_CHECK_INTERVAL_SECONDS: 30,
      PROXY_HEADER_TIMEOUT_SECONDS: 100,
      METRICS_COLLECTION: true,
      METRICS_FLUSH_SECONDS: 10,
      DRAIN_SECONDS: 30,
      STOP_GRACE_SECONDS: 10,
      RECONCILE_GRACE_SECONDS: 300,
      BUILD_TIMEOUT_SECONDS: 900,
      BUILD_MEMORY_MB: 1024,
      BUILD_CPUS: 1,
      BUILD_DISK_MB: 10240,
      SOURCE_MAX_BYTES: 1073741824,
      SOURCE_MAX_ENTRIES: 100000,
      SOURCE_TIMEOUT_SECONDS: 300,
      ALLOW_LOCAL_SOURCES: false,
      SUBDOMAIN_HOLD_DAYS: 30,
      LOG_STREAMS_PER_ACCOUNT: 10,
      INSTANCE_BIND_ADDRESS: "",
      EXPORT_INVOCATION_BYTES: 1073741824,
      EXPORT_JOURNAL_MAX_BYTES: 1073741824,
      DOMAIN_RECHECK_SECONDS: 45,
      DOMAIN_ACTIVE_RECHECK_SECONDS: 3600,
      DOMAIN_CLAIM_DAYS: 7,
      SERVICE_HOSTNAMES: [],
      DNS_RESOLVER_URL: "https://cloudflare-dns.com/dns-query",
      DNS_TIMEOUT_SECONDS: 5,
      CUSTOM_DOMAIN_TARGET: "",
      CUSTOM_DOMAIN_ADDRESSES: [],
      HOSTNAME_PROVIDER: "local",
      CLOUDFLARE_ZONE_ID: "",
      CLOUDFLARE_API_URL: "https://api.cloudflare.com/client/v4",
      RUNTIME_KIND: "docker",
      RUNTIME_BUILDER: "auto",
      REGISTRY: "",
      REGISTRY_API_URL: "",
      INSTANCE_PORT_RANGE: { first: 20000, last: 29999 },
      NODE_PROXY_URL: "",
      SWARM_NODE_ENGINE_URL: "",
      SWARM_CONSTRAINTS: [],
      SWARM_PROBE_IMAGE: "",
      SWARM_ENCRYPT_NETWORKS: true,
      DISK_ALLOWANCE_OVERRIDE_BYTES: 0,
    });
  });

  // Builds and source caps (isolation of tenants sharing an engine): each limit is a validated setting.
  it.each<[Record<string, string>, Record<string, unknown>]>([
    [{ ALLOW_LOCAL_SOURCES: "true" }, { ALLOW_LOCAL_SOURCES: true }],
    [{ ALLOW_LOCAL_SOURCES: "On" }, { ALLOW_LOCAL_SOURCES: true }],
    [{ ALLOW_LOCAL_SOURCES: "0" }, { ALLOW_LOCAL_SOURCES: false }],
    [{ ALLOW_LOCAL_SOURCES: "" }, { ALLOW_LOCAL_SOURCES: false }],
    [{ BUILD_CPUS: "0.5", BUILD_MEMORY_MB: "512", BUILD_TIMEOUT_SECONDS: "20" }, { BUILD_CPUS: 0.5, BUILD_MEMORY_MB: 512, BUILD_TIMEOUT_SECONDS: 20 }],
    [{ BUILD_DISK_MB: "64" }, { BUILD_DISK_MB: 64 }],
    [{ SOURCE_MAX_BYTES: "1048576", SOURCE_MAX_ENTRIES: "10", SOURCE_TIMEOUT_SECONDS: "5" }, { SOURCE_MAX_BYTES: 1048576, SOURCE_MAX_ENTRIES: 10, SOURCE_TIMEOUT_SECONDS: 5 }],
  ])("reads the build and source settings %j", (vars, expected) => {
    expect(parseConfig({ ...secrets, ...vars })).toMatchObject(expected);
  });

  it.each<[Record<string, string>, string]>([
    [{ ALLOW_LOCAL_SOURCES: "maybe" }, 'ALLOW_LOCAL_SOURCES must be true or false, got "maybe"'],
    [{ BUILD_CPUS: "0" }, 'BUILD_CPUS must be a number above 0 such as 0.5 or 2, got "0"'],
    [{ BUILD_CPUS: "-1" }, 'BUILD_CPUS must be a number above 0'],
    [{ BUILD_MEMORY_MB: "4" }, 'BUILD_MEMORY_MB must be at least 6, got "4"'],
    [{ BUILD_DISK_MB: "8" }, 'BUILD_DISK_MB must be at least 16, got "8"'],
    [{ BUILD_TIMEOUT_SECONDS: "0" }, 'BUILD_TIMEOUT_SECONDS must be at least 1, got "0"'],
    [{ SOURCE_MAX_BYTES: "1GiB" }, 'SOURCE_MAX_BYTES must be a whole number, got "1GiB"'],
    [{ SOURCE_MAX_ENTRIES: "0" }, 'SOURCE_MAX_ENTRIES must be at least 1, got "0"'],
    [{ SOURCE_TIMEOUT_SECONDS: "x" }, 'SOURCE_TIMEOUT_SECONDS must be a whole number, got "x"'],
  ])("refuses bad build and source settings %j", (vars, message) => {
    expect(() => parseConfig({ ...secrets, ...vars })).toThrow(message);
  });

  it("reads overrides as whole numbers", () => {
    expect(parseConfig({ ...secrets, LINK_TTL_SECONDS: "60", EXPORT_COOLDOWN_SECONDS: "0" })).toMatchObject({
      LINK_TTL_SECONDS: 60,
      EXPORT_COOLDOWN_SECONDS: 0,
    });
  });

  it("reads the engine address without a trailing slash and the apps domain in lowercase", () => {
    expect(parseConfig({ ...secrets, RUNTIME_URL: "http://127.0.0.1:2375/", APPS_DOMAIN: "Apps.Example.NET" })).toMatchObject({
      RUNTIME_URL: "http://127.0.0.1:2375",
      APPS_DOMAIN: "apps.example.net",
    });
  });

  it.each([
    ["21000-21009", { first: 21000, last: 21009 }],
    [" 30000-30000 ", { first: 30000, last: 30000 }],
  ])("reads INSTANCE_PORT_RANGE %j", (raw, range) => {
    expect(parseConfig({ ...secrets, INSTANCE_PORT_RANGE: raw }).INSTANCE_PORT_RANGE).toEqual(range);
  });

  it.each(["80-90", "30000-20000", "20000-70000", "20000", "a-b"])("refuses INSTANCE_PORT_RANGE %j, naming it", (raw) => {
    expect(() => parseConfig({ ...secrets, INSTANCE_PORT_RANGE: raw })).toThrow(/INSTANCE_PORT_RANGE must be <first>-<last>/);
  });

  it.each(["0.0.0.0", "::", "engine.example"])("refuses INSTANCE_BIND_ADDRESS %j (every interface, or not an address)", (raw) => {
    expect(() => parseConfig({ ...secrets, INSTANCE_BIND_ADDRESS: raw })).toThrow(/INSTANCE_BIND_ADDRESS must be one IP address/);
  });

  it("reads INSTANCE_BIND_ADDRESS", () => {
    expect(parseConfig({ ...secrets, INSTANCE_BIND_ADDRESS: "10.0.0.7" }).INSTANCE_BIND_ADDRESS).toBe("10.0.0.7");
  });

  it("reads the custom-domain settings", () => {
    expect(
      parseConfig({
        ...secrets,
        DOMAIN_RECHECK_SECONDS: "2",
        DOMAIN_ACTIVE_RECHECK_SECONDS: "600",
        DOMAIN_CLAIM_DAYS: "3",
        SERVICE_HOSTNAMES: "Console.Example.NET, api.example.net.",
        DNS_RESOLVER_URL: "http://127.0.0.1:5380/dns-query",
        CUSTOM_DOMAIN_TARGET: "Edge.Example.NET.",
        CUSTOM_DOMAIN_ADDRESSES: "192.0.2.10, 2001:DB8::10",
        HOSTNAME_PROVIDER: "cloudflare",
        CLOUDFLARE_ZONE_ID: "023e105f4ecef8ad9ca31a8372d0c353",
        CLOUDFLARE_API_TOKEN: "token",
      }),
    ).toMatchObject({
      DOMAIN_RECHECK_SECONDS: 2,
      DOMAIN_ACTIVE_RECHECK_SECONDS: 600,
      DOMAIN_CLAIM_DAYS: 3,
      SERVICE_HOSTNAMES: ["console.example.net", "api.example.net"],
      DNS_RESOLVER_URL: "http://127.0.0.1:5380/dns-query",
      CUSTOM_DOMAIN_TARGET: "edge.example.net",
      CUSTOM_DOMAIN_ADDRESSES: ["192.0.2.10", "2001:db8::10"],
      HOSTNAME_PROVIDER: "cloudflare",
    });
  });

  it("parses signing keys newest first", () => {
    const config = parseConfig({ ...secrets, LINK_SIGNING_KEYS: "new:" + "n".repeat(32) + ", old:" + "o".repeat(40) });
    expect(config.LINK_SIGNING_KEYS).toEqual([
      { kid: "new", secret: "n".repeat(32) },
      { kid: "old", secret: "o".repeat(40) },
    ]);
  });

  it("reads one bare encryption key (kid `default`) and a list of <kid>:<key> newest first", () => {
    expect(parseConfig(secrets).ENV_ENCRYPTION_KEY).toEqual([{ kid: "default", key: KEY_B64 }]);
    const other = "YWJjZGVmMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODk=";
    expect(parseConfig({ ...secrets, ENV_ENCRYPTION_KEY: `k2:${other}, default:${KEY_B64}` }).ENV_ENCRYPTION_KEY).toEqual([
      { kid: "k2", key: other },
      { kid: "default", key: KEY_B64 },
    ]);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ["a word", { LINK_TTL_SECONDS: "soon" }, /LINK_TTL_SECONDS must be a whole number, got "soon"/],
    ["a fraction", { RATE_LIMIT_BURST: "1.5" }, /RATE_LIMIT_BURST must be a whole number/],
    ["a negative number", { PENDING_RETRY_AFTER_SECONDS: "-1" }, /PENDING_RETRY_AFTER_SECONDS must be a whole number/],
    ["zero where at least 1 is needed", { RATE_LIMIT_PER_MINUTE: "0" }, /RATE_LIMIT_PER_MINUTE must be at least 1/],
    ["a missing signing key", { LINK_SIGNING_KEYS: undefined as unknown as string }, /LINK_SIGNING_KEYS is not set/],
    ["a short signing secret", { LINK_SIGNING_KEYS: "k1:short" }, /LINK_SIGNING_KEYS must be a comma-separated list/],
    ["a duplicate kid", { LINK_SIGNING_KEYS: `a:${"x".repeat(32)},a:${"y".repeat(32)}` }, /same kid/],
    ["a bad encryption key", { ENV_ENCRYPTION_KEY: "abc" }, /ENV_ENCRYPTION_KEY must be 32 random bytes/],
    ["an encryption key list with a short key", { ENV_ENCRYPTION_KEY: `k2:abc,k1:${KEY_B64}` }, /ENV_ENCRYPTION_KEY must be 32 random bytes/],
    ["an encryption key list with a duplicate kid", { ENV_ENCRYPTION_KEY: `k:${KEY_B64},k:${KEY_B64}` }, /ENV_ENCRYPTION_KEY has two keys with the same kid/],
    ["an engine address with a path", { RUNTIME_URL: "http://127.0.0.1:2375/v1.41" }, /RUNTIME_URL must be an http\(s\) address/],
    ["an engine socket path", { RUNTIME_URL: "unix:///var/run/docker.sock" }, /RUNTIME_URL must be an http\(s\) address/],
    ["an apps domain with a scheme", { APPS_DOMAIN: "https://apps.example.net" }, /APPS_DOMAIN must be a DNS name/],
    ["a zero re-check interval", { DOMAIN_RECHECK_SECONDS: "0" }, /DOMAIN_RECHECK_SECONDS must be a whole number of at least 1/],
    ["a plain-http resolver that is not loopback", { DNS_RESOLVER_URL: "http://dns.example.net/dns-query" }, /DNS_RESOLVER_URL must be an https address/],
    ["a custom domain target with a scheme", { CUSTOM_DOMAIN_TARGET: "https://edge.example.net" }, /CUSTOM_DOMAIN_TARGET must be a DNS name/],
    ["a custom domain address that is a name", { CUSTOM_DOMAIN_ADDRESSES: "192.0.2.1, edge.example.net" }, /not an address: edge.example.net/],
    ["a zero claim window", { DOMAIN_CLAIM_DAYS: "0" }, /DOMAIN_CLAIM_DAYS must be a whole number of at least 1/],
    ["a fractional Active re-check interval", { DOMAIN_ACTIVE_RECHECK_SECONDS: "1.5" }, /DOMAIN_ACTIVE_RECHECK_SECONDS must be a whole number/],
    ["a service hostname with a scheme", { SERVICE_HOSTNAMES: "console.example.net, https://api.example.net" }, /SERVICE_HOSTNAMES must be a comma-separated list of DNS names[\s\S]*not a name: https:\/\/api.example.net/],
    ["an unknown hostname provider", { HOSTNAME_PROVIDER: "fastly" }, /HOSTNAME_PROVIDER must be one of local, cloudflare/],
    ["the cloudflare provider without its zone and token", { HOSTNAME_PROVIDER: "cloudflare" }, /CLOUDFLARE_ZONE_ID must be set[\s\S]*CLOUDFLARE_API_TOKEN must be set/],
  ])("stops on %s, naming the variable", (_, override, message) => {
    expect(() => parseConfig({ ...secrets, ...override })).toThrow(ConfigError);
    expect(() => parseConfig({ ...secrets, ...override })).toThrow(message);
  });

  it("lists every bad variable at once", () => {
    expect(() => parseConfig({ ...secrets, LINK_TTL_SECONDS: "x", RATE_LIMIT_BURST: "y" })).toThrow(
      /LINK_TTL_SECONDS[\s\S]*RATE_LIMIT_BURST/,
    );
  });
});
