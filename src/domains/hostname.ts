/**
 * docs/domains.md (hostnames): the hostname of a custom domain is a valid
 * lowercase DNS name (an internationalised name is converted to punycode), 253 characters at most,
 * not under the service's own domains. Pure: the caller passes the service's domains.
 */

/** RFC 1035: a name is at most 253 characters in text form, a label at most 63. */
export const HOSTNAME_MAX_LENGTH = 253;
export const LABEL_MAX_LENGTH = 63;

export const HOSTNAME_MESSAGES = {
  empty: "Enter a hostname such as shop.example.com.",
  shape: "Enter a hostname only, such as shop.example.com: no scheme, path, port or spaces.",
  wildcard: "Wildcard hostnames are not supported. Add each hostname on its own.",
  address: "Enter a hostname, not an IP address.",
  labels: "A hostname has at least two labels, such as example.com.",
  long: `A hostname is at most ${HOSTNAME_MAX_LENGTH} characters long.`,
  label: `Each label of a hostname (the parts between dots) is 1 to ${LABEL_MAX_LENGTH} characters of letters, digits and hyphens, not starting or ending with a hyphen.`,
  tld: "The last label of a hostname cannot be all digits.",
  own: (domain: string) => `Hostnames under ${domain} belong to the service and cannot be added as custom domains.`,
} as const;

export type HostnameCheck = { ok: true; hostname: string } | { ok: false; message: string };

const LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** The URL parser applies IDNA (UTS 46): lowercases, maps and converts to punycode; null when it refuses. */
function toAscii(text: string): string | null {
  try {
    return new URL(`http://${text}/`).hostname;
  } catch {
    return null;
  }
}

/**
 * The custom-domain hostname as stored (lowercase, punycode, no trailing dot), or the sentence
 * saying what is wrong. `ownDomains` are the service's domains from configuration (claims.ts
 * `unclaimableDomains`: APPS_DOMAIN, CUSTOM_DOMAIN_TARGET, SERVICE_HOSTNAMES): neither they nor
 * names under them can be added.
 */
export function checkHostname(input: string, ownDomains: readonly string[]): HostnameCheck {
  const text = input.trim().replace(/\.$/, "");
  if (text === "") return { ok: false, message: HOSTNAME_MESSAGES.empty };
  if (/[\s/:?#@\\[\]]/.test(text)) return { ok: false, message: HOSTNAME_MESSAGES.shape };
  if (text.includes("*")) return { ok: false, message: HOSTNAME_MESSAGES.wildcard };
  if (IPV4.test(text)) return { ok: false, message: HOSTNAME_MESSAGES.address };
  // Checked before the URL parser, which reads a name ending in digits as an IPv4 address.
  if (/^\d+$/.test(text.slice(text.lastIndexOf(".") + 1))) return { ok: false, message: HOSTNAME_MESSAGES.tld };
  const ascii = toAscii(text);
  if (ascii === null || ascii === "") return { ok: false, message: HOSTNAME_MESSAGES.label };
  if (ascii.length > HOSTNAME_MAX_LENGTH) return { ok: false, message: HOSTNAME_MESSAGES.long };
  const labels = ascii.split(".");
  if (labels.some((label) => label.length === 0 || label.length > LABEL_MAX_LENGTH || !LABEL.test(label))) {
    return { ok: false, message: HOSTNAME_MESSAGES.label };
  }
  if (labels.length < 2) return { ok: false, message: HOSTNAME_MESSAGES.labels };
  for (const own of ownDomains) {
    const domain = own.toLowerCase().replace(/\.$/, "");
    if (domain !== "" && (ascii === domain || ascii.endsWith(`.${domain}`))) return { ok: false, message: HOSTNAME_MESSAGES.own(domain) };
  }
  return { ok: true, hostname: ascii };
}

/** A name with two labels (example.com) is taken for a zone apex, which cannot hold a CNAME. */
export function isApex(hostname: string): boolean {
  return hostname.split(".").length === 2;
}
