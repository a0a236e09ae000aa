import type { Config } from "../config";
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
