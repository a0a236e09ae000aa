/**
 * The bucket a client address is counted in by the limits: an IPv4 address alone, an IPv6
 * address by its /64. One IPv6 customer line or host usually holds a whole /64 and can pick any
 * address in it, so counting single IPv6 addresses would let one client rotate through 2^64 of
 * them. Pure: the address is an argument.
 */

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail allowed), or null when it is not one. */
function ipv6Groups(text: string): number[] | null {
  let address = text;
  const tail = /(?<=:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (tail) {
    const bytes = tail.slice(1).map(Number);
    if (bytes.some((b) => b > 255)) return null;
    const hex = (high: number, low: number) => ((high << 8) | low).toString(16);
    address = `${address.slice(0, tail.index)}${hex(bytes[0]!, bytes[1]!)}:${hex(bytes[2]!, bytes[3]!)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":"));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if ([...head, ...rest].some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  const given = head.length + rest.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return null;
  const zeros: number[] = Array(8 - given).fill(0);
  return [...head, ...zeros.map(String), ...rest].map((g) => parseInt(g, 16));
}

/**
 * `203.0.113.7` stays as it is; `2001:db8:a:b:1:2:3:4` becomes `2001:db8:a:b::/64`; an
 * IPv4-mapped IPv6 address (`::ffff:203.0.113.7`) counts as its IPv4 address. Anything else
 * (a missing header's "unknown", a malformed value) is kept as given, in lower case.
 */
export function addressBucket(address: string): string {
  const text = address.trim().toLowerCase();
  if (!text.includes(":")) return text;
  const groups = ipv6Groups(text.replace(/%.*$/, ""));
  if (!groups) return text;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}
