/**
 * Networks that tenant code runs on, on one Docker engine: each app's own bridge and the build
 * network every build step uses. Their Linux bridge interfaces are all named `cpa-…`, so the host's
 * firewall (scripts/egress-firewall.sh) can match every one of them with a single wildcard
 * (`-i cpa-+`) and keep their traffic away from the host's own addresses and private ranges, without
 * touching the engine's default bridge or any network the control plane did not create.
 */

/** The prefix of every tenant bridge's interface name (`iptables -i cpa-+`). */
export const TENANT_BRIDGE_PREFIX = "cpa-";

/** The network build steps run on (classic builder's `networkmode`), bridge `cpa-build`. */
export const BUILD_NETWORK = "control-plane-build";

/** Linux allows interface names of at most 15 bytes. */
const IFNAME_MAX = 15;
const HASH_CHARS = IFNAME_MAX - TENANT_BRIDGE_PREFIX.length;

/**
 * The bridge interface name of a tenant network: `cpa-` and 11 base-36 characters of the name's
 * 64-bit FNV-1a hash (the build network's is `cpa-build`). Distinct names collide with odds of
 * about one in 10^17 per pair; a collision makes the second network's creation fail, never share.
 */
export function tenantBridgeName(network: string): string {
  if (network === BUILD_NETWORK) return `${TENANT_BRIDGE_PREFIX}build`;
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(network)) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return TENANT_BRIDGE_PREFIX + (hash % 36n ** BigInt(HASH_CHARS)).toString(36).padStart(HASH_CHARS, "0");
}

/**
 * `POST /networks/create` for a tenant network: a plain bridge (not Internal, so it reaches the
 * internet; Docker isolates user-defined bridges from one another) whose interface is
 * `tenantBridgeName(name)`.
 */
export function tenantNetworkSpec(name: string, labels: Record<string, string>): Record<string, unknown> {
  return {
    Name: name,
    Driver: "bridge",
    CheckDuplicate: true,
    Internal: false,
    Attachable: false,
    Labels: labels,
    Options: { "com.docker.network.bridge.name": tenantBridgeName(name) },
  };
}
