/**
 * Cookies stay with their app. Every app answers at `<subdomain>.<APPS_DOMAIN>`, so a cookie an app
 * sets with `Domain=<APPS_DOMAIN>` (or a parent of it) would be sent by browsers to every other
 * app, and to the console when it lives under a parent: session fixation and cookie tossing across
 * tenants. The proxy therefore makes such a cookie host-only (every `Domain` attribute removed):
 * the app keeps its cookie, on its own hostname alone. A `Domain` that covers nothing but the
 * app's own hostname (or that is not a parent of APPS_DOMAIN at all, which browsers refuse anyway)
 * is left as it is. Only a response carrying `Set-Cookie` pays anything (one header lookup).
 */

/**
 * Whether a cookie's `Domain` value covers APPS_DOMAIN: it is APPS_DOMAIN or one of its parents,
 * compared as browsers do (RFC 6265 5.2.3: a leading dot ignored, any case), a trailing dot too.
 */
export function domainCoversAppsDomain(domain: string, appsDomain: string): boolean {
  let d = domain.trim().toLowerCase();
  if (d.startsWith(".")) d = d.slice(1);
  if (d.endsWith(".")) d = d.slice(0, -1);
  if (d === "") return false;
  const apps = appsDomain.toLowerCase();
  return apps === d || apps.endsWith(`.${d}`);
}

/**
 * One `Set-Cookie` value as the client may receive it: the same value, or, when a `Domain`
 * attribute covers APPS_DOMAIN, the value with every `Domain` attribute removed (host-only). The
 * name, value and other attributes are kept byte for byte.
 */
export function hostOnlyCookie(setCookie: string, appsDomain: string): string {
  const parts = setCookie.split(";");
  let crosses = false;
  for (let i = 1; i < parts.length; i++) {
    const value = domainValue(parts[i]!);
    if (value !== null && domainCoversAppsDomain(value, appsDomain)) crosses = true;
  }
  if (!crosses) return setCookie;
  return parts.filter((part, i) => i === 0 || domainValue(part) === null).join(";");
}

/** The value of a `Domain=` cookie attribute (name in any case, spaces around), else null. */
function domainValue(attribute: string): string | null {
  const eq = attribute.indexOf("=");
  const name = (eq < 0 ? attribute : attribute.slice(0, eq)).trim().toLowerCase();
  if (name !== "domain") return null;
  return eq < 0 ? "" : attribute.slice(eq + 1);
}

/**
 * The response with its cookies made host-only where their `Domain` covers APPS_DOMAIN; the same
 * response, untouched, when it sets no cookie or none crosses. One that changes is a new response
 * around the same body (and the same WebSocket, for a 101 the runtime passed as it is).
 */
export function keepCookiesHome(res: Response, appsDomain: string): Response {
  if (!res.headers.has("set-cookie")) return res;
  const cookies = res.headers.getSetCookie();
  const kept = cookies.map((cookie) => hostOnlyCookie(cookie, appsDomain));
  if (kept.every((cookie, i) => cookie === cookies[i])) return res;
  const headers = new Headers(res.headers);
  headers.delete("set-cookie");
  for (const cookie of kept) headers.append("set-cookie", cookie);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers, webSocket: res.webSocket });
}
