import type { Config } from "../config";
import { cloudflareProvider } from "./cloudflare";
import type { ProviderOutcome } from "./states";

/**
 * Who puts a custom hostname's route and certificate in place (issue 15, "providers"). The
 * DomainChecker asks `ensure` when a domain starts `Verifying…` and at each step after, until the
 * route is established (and, where HTTPS is served, the certificate obtained); `remove` when the
 * domain is removed. Failures come back as a `failed` outcome with a sentence, never a throw.
 */
export interface HostnameProvider {
  readonly name: Config["HOSTNAME_PROVIDER"];
  /** Creates the hostname at the provider when `ref` is null, else reads its state. */
  ensure(hostname: string, ref: string | null): Promise<{ ref: string | null; outcome: ProviderOutcome }>;
  /** Deletes it at the provider; a hostname already gone is not an error. */
  remove(hostname: string, ref: string | null): Promise<void>;
}

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
