/**
 * Which requests are for an app: those whose Host is `<subdomain>.<APPS_DOMAIN>`. Everything else
 * (the apps domain itself, other hosts) reaches the console and the API.
 */
export function appSubdomainOf(hostHeader: string | undefined, appsDomain: string): string | null {
  if (!hostHeader) return null;
  const host = normalHost(hostHeader);
  const suffix = `.${appsDomain}`;
  if (!host.endsWith(suffix)) return null;
  const label = host.slice(0, -suffix.length);
  return label === "" ? null : label;
}

/** The last host normalised, and its normal form: requests to one isolate mostly carry one Host. */
let lastRaw = "";
let lastNormal = "";

/** A host as app hostnames and custom domains are compared: lowercase, no port, no trailing dot. */
export function normalHost(host: string): string {
  if (host !== lastRaw) {
    lastNormal = host
      .trim()
      .toLowerCase()
      .replace(/:\d+$/, "")
      .replace(/\.$/, "");
    lastRaw = host;
  }
  return lastNormal;
}
