/**
 * How the proxy reaches an app's instance (README "Deploying"): directly at the URL the engine
 * reported, or, when NODE_PROXY_URL names the node proxy on each machine, at that URL for the
 * instance's node with the port in `X-Instance-Port` and the Access service token, so no raw
 * instance port is ever exposed beyond its machine. Pure: the proxy applies the result.
 */

/** What the proxy knows of where a running app's instance answers (the app row's columns). */
export interface InstancePlace {
  instanceUrl: string;
  /** `<kind>:<engine host>`; null for rows written before instances had addresses. */
  engine: string | null;
  node: string | null;
  port: number | null;
}

export interface InstanceTarget {
  /** Base URL the request goes to (its path and query are appended). */
  url: string;
  /** Headers set on the request after the client's own of the same names are removed. */
  headers: Record<string, string>;
}

/** Headers that route a request through the node proxy: a client's own are never passed on. */
export const NODE_PROXY_HEADERS = ["x-instance-port", "cf-access-client-id", "cf-access-client-secret", "cf-access-jwt-assertion"] as const;

/**
 * The target of a request for an instance at `place`. Through the node proxy only when one is
 * configured and the instance's node and port are known; otherwise the engine's URL.
 */
export function instanceTarget(place: InstancePlace, nodeProxy: { url: string; clientId: string; clientSecret: string }): InstanceTarget {
  if (nodeProxy.url === "" || place.node === null || place.port === null) return { url: place.instanceUrl, headers: {} };
  const headers: Record<string, string> = { "X-Instance-Port": String(place.port) };
  if (nodeProxy.clientId !== "") {
    headers["CF-Access-Client-Id"] = nodeProxy.clientId;
    headers["CF-Access-Client-Secret"] = nodeProxy.clientSecret;
  }
  return { url: nodeProxy.url.replace("{node}", place.node), headers };
}

/** Whether the engine may move the instance by itself (a swarm reschedules tasks), so the proxy asks it where the instance went. */
export function mayMove(place: InstancePlace): boolean {
  return place.engine?.startsWith("swarm:") === true;
}
