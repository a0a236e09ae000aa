/**
 * Which requests are for an app: those whose Host is `<subdomain>.<APPS_DOMAIN>`. Everything else
 * (the apps domain itself, other hosts) reaches the console and the API.
 */
export function appSubdomainOf(hostHeader: string | undefined, appsDomain: string): string | null {
  if (!hostHeader) return null;
  const host = hostHeader
    .trim()
    .toLowerCase()
    .replace(/:\d+$/, "")
    .replace(/\.$/, "");
  const suffix = `.${appsDomain}`;
  if (!host.endsWith(suffix)) return null;
  const label = host.slice(0, -suffix.length);
  return label === "" ? null : label;
}
