/**
 * The address rule for source fetches: which URLs the Worker may fetch a repository archive from,
 * applied to the repository's address and to every redirect hop alike.
 *
 * - https only; plain http only when local sources are allowed (ALLOW_LOCAL_SOURCES, for a dev forge).
 * - Loopback and private addresses (127/8, 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, ::1,
 *   `localhost`, single-label and private-use names such as `*.internal`) only when local sources
 *   are allowed.
 * - Never link-local or cloud metadata addresses (169.254/16, fe80::/10, 100.100.100.200,
 *   fd00:ec2::254, 168.63.129.16, `metadata.google.internal` and the like), nor unspecified,
 *   multicast or reserved ones, whatever the setting.
 *
 * IP literals are judged in every spelling: the URL parser turns decimal (`2130706433`), hex
 * (`0x7f.1`), octal and short IPv4 forms into dotted quads, and IPv6 forms that carry an IPv4
 * address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`)
 * are judged by that IPv4 address. Names are not resolved here: on Cloudflare a Worker's fetch
 * does not reach private networks, and locally the setting is on anyway.
 */

export type AddressClass = "public" | "local" | "forbidden";

export interface SourcePolicy {
  /** ALLOW_LOCAL_SOURCES: http and loopback or private addresses are fetched. */
  allowLocal: boolean;
}

/** Why a URL may not be fetched, as the clause a sentence ends with; null when it may. */
export type AddressRefusal = "not_http" | "http" | "local" | "forbidden" | "credentials";

/** Cloud metadata service names (GCP, AWS, Tencent, Equinix Metal); any subdomain of them too. */
const METADATA_NAMES = ["metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal", "metadata.tencentyun.com", "metadata.platformequinix.com"];

/** Private-use names: never on the public DNS, so only a local resolver answers them. */
const PRIVATE_SUFFIXES = ["localhost", "internal", "local", "lan", "home.arpa", "intranet", "corp", "private"];

/** The rule for one URL: null when it may be fetched under `policy`, else why not. */
export function addressRefusal(url: string | URL, policy: SourcePolicy): AddressRefusal | null {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    return "not_http";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "not_http";
  if (parsed.username !== "" || parsed.password !== "") return "credentials";
  const kind = classifyHost(parsed.hostname);
  if (kind === "forbidden") return "forbidden";
  if (!policy.allowLocal && kind === "local") return "local";
  if (!policy.allowLocal && parsed.protocol === "http:") return "http";
  return null;
}

/** The class of a URL's hostname (as `URL.hostname` gives it: IPv6 in brackets, IPv4 normalised). */
export function classifyHost(hostname: string): AddressClass {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  if (host.startsWith("[") && host.endsWith("]")) {
    const words = parseIpv6(host.slice(1, -1));
    return words ? classifyIpv6(words) : "forbidden";
  }
  const v4 = parseIpv4(host);
  if (v4 !== null) return classifyIpv4(v4);
  // A name made of digits and dots that is not a valid address is not a public name either.
  if (host === "" || /^[\d.]+$/.test(host) || /^0x/i.test(host)) return "forbidden";
  if (METADATA_NAMES.some((name) => host === name || host.endsWith(`.${name}`))) return "forbidden";
  if (!host.includes(".")) return "local";
  if (PRIVATE_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`))) return "local";
  return "public";
}

/** Dotted-quad IPv4 (what the URL parser leaves of every IPv4 form) as an unsigned 32-bit number. */
export function parseIpv4(text: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

/** IPv6 text (no brackets, no zone) as eight 16-bit words; a trailing dotted quad is accepted. */
export function parseIpv6(text: string): number[] | null {
  let body = text.toLowerCase();
  const tail: number[] = [];
  const quad = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(body);
  if (quad) {
    const v4 = parseIpv4(quad[2]!);
    if (v4 === null) return null;
    tail.push(v4 >>> 16, v4 & 0xffff);
    body = quad[1]!.endsWith("::") ? quad[1]! : quad[1]!.slice(0, -1);
  }
  const halves = body.split("::");
  if (halves.length > 2) return null;
  const words = (part: string) => (part === "" ? [] : part.split(":"));
  const head = words(halves[0]!);
  const rest = halves.length === 2 ? words(halves[1]!) : [];
  if ([...head, ...rest].some((w) => !/^[0-9a-f]{1,4}$/.test(w))) return null;
  const given = head.length + rest.length + tail.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return null;
  const zeros = new Array<number>(8 - given).fill(0);
  return [...head.map((w) => parseInt(w, 16)), ...(halves.length === 2 ? zeros : []), ...rest.map((w) => parseInt(w, 16)), ...tail];
}

const inV4 = (ip: number, base: string, bits: number) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return ((ip & mask) >>> 0) === ((parseIpv4(base)! & mask) >>> 0);
};

export function classifyIpv4(ip: number): AddressClass {
  const forbidden: [string, number][] = [
    ["0.0.0.0", 8], // "this network": 0.0.0.0 reaches the local host
    ["169.254.0.0", 16], // link-local, where most clouds serve instance metadata
    ["100.100.100.200", 32], // Alibaba Cloud metadata
    ["168.63.129.16", 32], // Azure platform endpoint
    ["192.0.0.0", 24], // IETF protocol assignments
    ["224.0.0.0", 4], // multicast
    ["240.0.0.0", 4], // reserved and broadcast
  ];
  if (forbidden.some(([base, bits]) => inV4(ip, base, bits))) return "forbidden";
  const local: [string, number][] = [
    ["127.0.0.0", 8],
    ["10.0.0.0", 8],
    ["172.16.0.0", 12],
    ["192.168.0.0", 16],
    ["100.64.0.0", 10], // carrier-grade NAT, also cloud-internal
    ["198.18.0.0", 15], // benchmarking
    ["192.0.2.0", 24], // documentation ranges
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
  ];
  return local.some(([base, bits]) => inV4(ip, base, bits)) ? "local" : "public";
}

export function classifyIpv6(w: number[]): AddressClass {
  const v4 = (hi: number, lo: number) => classifyIpv4(((hi << 16) | lo) >>> 0);
  const zeroUpTo = (n: number) => w.slice(0, n).every((x) => x === 0);
  if (w.every((x) => x === 0)) return "forbidden"; // ::
  if (zeroUpTo(7) && w[7] === 1) return "local"; // ::1
  if (zeroUpTo(5) && w[5] === 0xffff) return v4(w[6]!, w[7]!); // IPv4-mapped
  if (zeroUpTo(6)) return v4(w[6]!, w[7]!); // IPv4-compatible
  if (w[0] === 0x64 && w[1] === 0xff9b && (w.slice(2, 6).every((x) => x === 0) || w[2] === 1)) return v4(w[6]!, w[7]!); // NAT64
  if (w[0] === 0x2002) return v4(w[1]!, w[2]!); // 6to4
  if ((w[0]! & 0xffc0) === 0xfe80) return "forbidden"; // link-local
  if (w[0] === 0xfd00 && w[1] === 0x0ec2 && w.slice(2, 7).every((x) => x === 0) && w[7] === 0x254) return "forbidden"; // AWS metadata
  if ((w[0]! & 0xff00) === 0xff00) return "forbidden"; // multicast
  if ((w[0]! & 0xfe00) === 0xfc00) return "local"; // unique local
  if ((w[0]! & 0xffc0) === 0xfec0) return "local"; // site-local (deprecated)
  if (w[0] === 0x2001 && w[1] === 0x0db8) return "local"; // documentation
  if (zeroUpTo(1) || w[0] === 0x0100) return "forbidden"; // other reserved, discard-only
  return "public";
}
