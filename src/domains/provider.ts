import type { Config } from "../config";
import { cloudflareProvider } from "./cloudflare";
import type { HostnameProvider } from "./hostname-provider";

export type { HostnameProvider } from "./hostname-provider";

/**
 * `local` (the default, and what npm start uses): the Worker's own Host-based proxy is the route,
 * in place as soon as the domain is `Verifying…`; it serves HTTP only, so the domain is `Active`
 * at the first step after the route is in place, with HTTPS not served.
 */
export const localProvider: HostnameProvider = {
  name: "local",
  ensure: async () => ({ ref: null, outcome: { kind: "active", https: false, waitingForCertificate: false } }),
  remove: async () => undefined,
};

export function hostnameProvider(config: Config, env: Env, fetcher: typeof fetch = fetch): HostnameProvider {
  if (config.HOSTNAME_PROVIDER === "cloudflare") {
    return cloudflareProvider({ apiUrl: config.CLOUDFLARE_API_URL, zoneId: config.CLOUDFLARE_ZONE_ID, token: env.CLOUDFLARE_API_TOKEN ?? "", fetch: fetcher });
  }
  return localProvider;
}
