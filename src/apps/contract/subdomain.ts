/**
 * docs/apps.md, "Subdomain": 3 to 63 characters; lowercase letters, digits, hyphens; no leading
 * or trailing hyphen; must not start with `app-`; further names reserved. Blank gives a generated
 * hostname derived from the app id.
 */

/** A DNS label is at most 63 octets (RFC 1035); the spec's minimum keeps names meaningful. */
export const SUBDOMAIN_MIN_LENGTH = 3;
export const SUBDOMAIN_MAX_LENGTH = 63;

/** Generated names start with this; chosen names may not, so the two can never collide. */
export const GENERATED_PREFIX = "app-";

/**
 * Names no app may take: the service's own hosts, mail and well-known infrastructure names, and
 * words that would let an app pass itself off as the platform. Names under 3 characters are
 * already refused by length, so they are not listed.
 */
export const RESERVED_SUBDOMAINS: readonly string[] = [
  "www", "api", "console", "admin", "administrator", "app", "apps", "mail", "email", "smtp", "imap",
  "pop3", "ns1", "ns2", "dns", "ftp", "sftp", "ssh", "vpn", "status", "docs", "help", "support",
  "dashboard", "static", "assets", "cdn", "media", "files", "download", "downloads", "auth",
  "login", "logout", "signin", "signup", "register", "account", "accounts", "billing", "pay",
  "payments", "wallet", "sso", "oauth", "internal", "git", "registry", "webhook", "webhooks",
  "security", "abuse", "postmaster", "hostmaster", "webmaster", "root", "system", "localhost",
  "autoconfig", "autodiscover", "wpad", "acme",
];

const RESERVED = new Set(RESERVED_SUBDOMAINS);

/**
 * The message a user sees for a chosen subdomain, or null when it is acceptable. Blank input is
 * not "no problem" here: the caller treats blank as "generate one" before asking.
 */
export function subdomainProblem(name: string): string | null {
  if (name.length < SUBDOMAIN_MIN_LENGTH || name.length > SUBDOMAIN_MAX_LENGTH) {
    return `A subdomain is ${SUBDOMAIN_MIN_LENGTH} to ${SUBDOMAIN_MAX_LENGTH} characters long.`;
  }
  if (!/^[a-z0-9-]+$/.test(name)) return "Use only lowercase letters, digits and hyphens in a subdomain.";
  if (name.startsWith("-") || name.endsWith("-")) return "A subdomain cannot start or end with a hyphen.";
  if (name.startsWith(GENERATED_PREFIX)) return `Subdomains starting with "${GENERATED_PREFIX}" are kept for generated names.`;
  // RFC 5891 keeps labels with "--" in places 3 and 4 for encodings such as xn-- (IDNA).
  if (name.slice(2, 4) === "--") return "A subdomain cannot have hyphens in both its third and fourth places.";
  if (RESERVED.has(name)) return `The subdomain "${name}" is reserved.`;
  return null;
}

/**
 * The subdomain given to an app whose subdomain was left blank: `app-` and the first 12 hex
 * characters of its id (a UUID) without dashes, e.g. `app-3f2a9c1be0d4`.
 */
export function generatedSubdomain(appId: string): string {
  const hex = appId.replace(/-/g, "").toLowerCase();
  if (!/^[0-9a-f]{12}/.test(hex)) throw new Error(`An app id must be a UUID, got "${appId}".`);
  return GENERATED_PREFIX + hex.slice(0, 12);
}

/** The hostname an app answers at: `<subdomain>.<apps domain>` (the domain as configured, e.g. `apps.example.net`). */
export function appHostname(subdomain: string, appsDomain: string): string {
  const domain = appsDomain.trim().toLowerCase().replace(/^\.+|\.+$/g, "");
  return `${subdomain}.${domain}`;
}
