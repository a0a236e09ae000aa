import { z } from "zod";

/**
 * The custom-domain settings (issue 15), joined into the Worker's settings by src/config.ts. Each
 * reads a plain environment variable; CLOUDFLARE_API_TOKEN is a secret (`wrangler secret put`).
 */

const DNS_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;
/** One label or more (the console may be at `localhost`). */
const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9a-f:]+$/;
/** http is allowed for loopback hosts only (the DoH and Cloudflare API stand-ins of local runs). */
const URL_SHAPE = /^(https:\/\/[^\s/]+|http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?)(\/\S*)?$/;

const whole = (name: string, fallback: number) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = raw?.trim() ?? "";
      if (text === "") return fallback;
      if (!/^\d+$/.test(text) || Number(text) < 1) {
        ctx.addIssue({ code: "custom", message: `${name} must be a whole number of at least 1, got "${raw}"` });
        return z.NEVER;
      }
      return Number(text);
    });

const url = (name: string, fallback: string) =>
  z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = raw?.trim() || fallback;
      if (!URL_SHAPE.test(text)) {
        ctx.addIssue({ code: "custom", message: `${name} must be an https address (http only for 127.0.0.1 or localhost), got "${raw}"` });
        return z.NEVER;
      }
      return text.replace(/\/$/, "");
    });

export const HOSTNAME_PROVIDERS = ["local", "cloudflare"] as const;

export const DOMAIN_SETTINGS = {
  /** docs/domains.md, rule 3: the re-check interval while waiting, 45 seconds. */
  DOMAIN_RECHECK_SECONDS: whole("DOMAIN_RECHECK_SECONDS", 45),
  /** `Active` domains are re-checked this often; one whose DNS no longer points to its app goes `Error`. */
  DOMAIN_ACTIVE_RECHECK_SECONDS: whole("DOMAIN_ACTIVE_RECHECK_SECONDS", 3600),
  /** A claim left `Pending DNS` or `Error` this many days is removed (Cloudflare for SaaS's validation window). */
  DOMAIN_CLAIM_DAYS: whole("DOMAIN_CLAIM_DAYS", 7),
  /** The console's and the API's own hostnames, comma-separated: never claimable, nor any name under them. */
  SERVICE_HOSTNAMES: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const list = (raw ?? "").split(",").map((name) => name.trim().toLowerCase().replace(/\.$/, "")).filter(Boolean);
      const bad = list.filter((name) => !HOST_NAME.test(name));
      if (bad.length > 0) {
        ctx.addIssue({ code: "custom", message: `SERVICE_HOSTNAMES must be a comma-separated list of DNS names such as console.example.net; not a name: ${bad.join(", ")}` });
        return z.NEVER;
      }
      return list;
    }),
  /** DNS-over-HTTPS JSON endpoint (application/dns-json). */
  DNS_RESOLVER_URL: url("DNS_RESOLVER_URL", "https://cloudflare-dns.com/dns-query"),
  DNS_TIMEOUT_SECONDS: whole("DNS_TIMEOUT_SECONDS", 5),
  /** A name custom domains may CNAME to besides the app's own hostname; "" for none. */
  CUSTOM_DOMAIN_TARGET: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim().toLowerCase().replace(/\.$/, "");
      if (text !== "" && !DNS_NAME.test(text)) {
        ctx.addIssue({ code: "custom", message: `CUSTOM_DOMAIN_TARGET must be a DNS name such as edge.example.net, got "${raw}"` });
        return z.NEVER;
      }
      return text;
    }),
  /** Addresses an apex custom domain's A/AAAA records must all be among; comma-separated. */
  CUSTOM_DOMAIN_ADDRESSES: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const list = (raw ?? "").split(",").map((a) => a.trim().toLowerCase()).filter(Boolean);
      const bad = list.filter((a) => !IPV4.test(a) && !(a.includes(":") && IPV6.test(a)));
      if (bad.length > 0) {
        ctx.addIssue({ code: "custom", message: `CUSTOM_DOMAIN_ADDRESSES must be a comma-separated list of IPv4 and IPv6 addresses; not an address: ${bad.join(", ")}` });
        return z.NEVER;
      }
      return list;
    }),
  /** Who puts routes and certificates in place for custom domains. */
  HOSTNAME_PROVIDER: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim() || "local";
      if (!(HOSTNAME_PROVIDERS as readonly string[]).includes(text)) {
        ctx.addIssue({ code: "custom", message: `HOSTNAME_PROVIDER must be one of ${HOSTNAME_PROVIDERS.join(", ")}, got "${raw}"` });
        return z.NEVER;
      }
      return text as (typeof HOSTNAME_PROVIDERS)[number];
    }),
  CLOUDFLARE_ZONE_ID: z.string().optional().transform((raw) => raw?.trim() ?? ""),
  CLOUDFLARE_API_TOKEN: z.string().optional().transform((raw) => raw?.trim() ?? ""),
  CLOUDFLARE_API_URL: url("CLOUDFLARE_API_URL", "https://api.cloudflare.com/client/v4"),
};

export const DOMAIN_SETTING_DEFAULTS = {
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
} as const;

/** The cloudflare provider cannot work without its zone and token: the Worker refuses to start. */
export function domainSettingsProblems(config: { HOSTNAME_PROVIDER: string; CLOUDFLARE_ZONE_ID: string; CLOUDFLARE_API_TOKEN: string }, ctx: z.RefinementCtx): void {
  if (config.HOSTNAME_PROVIDER !== "cloudflare") return;
  if (config.CLOUDFLARE_ZONE_ID === "") ctx.addIssue({ code: "custom", path: ["CLOUDFLARE_ZONE_ID"], message: "CLOUDFLARE_ZONE_ID must be set when HOSTNAME_PROVIDER is cloudflare" });
  if (config.CLOUDFLARE_API_TOKEN === "") {
    ctx.addIssue({ code: "custom", path: ["CLOUDFLARE_API_TOKEN"], message: "CLOUDFLARE_API_TOKEN must be set when HOSTNAME_PROVIDER is cloudflare (run `wrangler secret put CLOUDFLARE_API_TOKEN`)" });
  }
}
