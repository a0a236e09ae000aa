/**
 * The request headers an app's instance receives: the client's headers, less what describes only
 * the client's hop and what the client could forge about itself, plus the forwarding headers we
 * set. One `Headers` copy per request and nothing else allocated unless the client named headers
 * in `Connection` (this runs on every proxied request).
 *
 * - Hop-by-hop headers are dropped (RFC 9110 7.6.1): the standard ones below, and every header
 *   the client named in `Connection`.
 * - `Forwarded`, `X-Real-IP` and `X-Forwarded-Port` from the client are dropped: nothing we did
 *   not set ourselves may look as if we had.
 * - `X-Forwarded-For` is the client's value (if any) with the address the Worker saw appended, so
 *   the rightmost entry is always ours; an app trusts that one only. When the value already ends
 *   with that address (Cloudflare may have appended it before the Worker), it is not added twice.
 *   With no address seen, the client's value is dropped rather than passed on as if vouched for.
 * - `X-Forwarded-Proto` (`http`/`https`, the scheme the client used) and `X-Forwarded-Host` (the
 *   Host the client asked for) are set by us, replacing anything the client sent.
 * - A WebSocket handshake keeps `Upgrade: websocket` (the runtime's fetch needs it to open the
 *   WebSocket to the instance); any other `Upgrade` is dropped.
 */

/** Standard hop-by-hop headers (RFC 9110 7.6.1, RFC 7230 6.1, and the non-standard Proxy-Connection). */
export const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
] as const;

/** Forwarding headers a client may send that we neither set nor pass on. */
export const CLIENT_FORWARDING = ["forwarded", "x-real-ip", "x-forwarded-port"] as const;

/** What the Worker saw of the client's hop. */
export interface Hop {
  /** The Host the client asked for (`myapp.localhost:8787`). */
  host: string;
  /** The scheme the client used. */
  proto: "http" | "https";
  /** The address the Worker saw (`CF-Connecting-IP`); null when unknown. */
  client: string | null;
}

/** A header name as RFC 9110 allows it (a token); anything else in `Connection` is ignored. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Whether the request is a WebSocket handshake (`Upgrade: websocket`, RFC 6455 4.1). */
export function isWebSocketUpgrade(headers: Headers): boolean {
  const upgrade = headers.get("upgrade");
  return upgrade !== null && upgrade.trim().toLowerCase() === "websocket";
}

/** The headers to send to the instance for a request that arrived with `incoming` over `hop`. */
export function forwardHeaders(incoming: Headers, hop: Hop): Headers {
  const websocket = isWebSocketUpgrade(incoming);
  const out = new Headers(incoming);
  dropHopByHopHeaders(out);
  for (const name of CLIENT_FORWARDING) out.delete(name);
  if (websocket) out.set("upgrade", "websocket");
  const chain = out.get("x-forwarded-for");
  if (hop.client === null || hop.client === "") out.delete("x-forwarded-for");
  else out.set("x-forwarded-for", appendAddress(chain, hop.client));
  out.set("x-forwarded-proto", hop.proto);
  out.set("x-forwarded-host", hop.host);
  return out;
}

/**
 * Drops, in place, the hop-by-hop headers (RFC 9110 7.6.1) and every header named in
 * `Connection`: they describe one hop only (the client's to the Worker on a request, the
 * instance's to the Worker on a response), so none is passed on. Costs nothing more when there
 * are none.
 */
export function dropHopByHopHeaders(headers: Headers): void {
  const connection = headers.get("connection");
  if (connection !== null) dropNamed(headers, connection);
  for (const name of HOP_BY_HOP) headers.delete(name);
}

/** `chain, address`, unless the chain already ends with the address. */
export function appendAddress(chain: string | null, address: string): string {
  if (chain === null) return address;
  const trimmed = chain.trim();
  if (trimmed === "") return address;
  const last = trimmed.slice(trimmed.lastIndexOf(",") + 1).trim();
  return last === address ? trimmed : `${trimmed}, ${address}`;
}

/** Deletes every header named in a `Connection` value (comma-separated, case-insensitive). */
function dropNamed(headers: Headers, connection: string): void {
  let start = 0;
  while (start <= connection.length) {
    let end = connection.indexOf(",", start);
    if (end < 0) end = connection.length;
    const name = connection.slice(start, end).trim();
    if (name !== "" && TOKEN.test(name)) headers.delete(name);
    start = end + 1;
  }
}
