import { dropHopByHopHeaders, forwardHeaders, isWebSocketUpgrade } from "./forward-headers";
import { type InstanceTarget, NODE_PROXY_HEADERS } from "./instance-target";

/**
 * One request passed to an app's instance. The instance has `headerTimeoutMs` to send its
 * response headers, counted from when the whole request body has been handed to it (a slow
 * upload is not the instance's wait); past that the fetch is aborted and `InstanceTimeout`
 * thrown, which the proxy answers with its 504 page. Once the headers are in, nothing here ever
 * cuts the exchange: a body that streams for an hour streams for an hour, and a WebSocket (the
 * instance's 101 is relayed as it is) lives until one side closes it.
 */

export class InstanceTimeout extends Error {
  override readonly name = "InstanceTimeout";
  constructor(readonly seconds: number) {
    super(`the instance sent no response headers within ${seconds} s`);
  }
}

export async function fetchInstance(req: Request, hostHeader: string | undefined, target: InstanceTarget | string, headerTimeoutMs: number, fetcher: typeof fetch = (input, init) => fetch(input, init)): Promise<Response> {
  const instanceUrl = typeof target === "string" ? target : target.url;
  const url = req.url;
  const authority = url.indexOf("://") + 3;
  const pathAt = url.indexOf("/", authority);
  const headers = forwardHeaders(req.headers, {
    host: hostHeader ?? url.slice(authority, pathAt < 0 ? undefined : pathAt),
    proto: url.startsWith("https:") ? "https" : "http",
    client: req.headers.get("CF-Connecting-IP"),
  });
  // The node proxy's routing and credential headers come only from here, never from the client.
  for (const name of NODE_PROXY_HEADERS) headers.delete(name);
  if (typeof target !== "string") for (const [name, value] of Object.entries(target.headers)) headers.set(name, value);
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let answered = false;
  const startClock = () => {
    // A body the instance finishes reading after it answered (an early 413, say) starts nothing.
    if (!answered) timer = setTimeout(() => controller.abort(new InstanceTimeout(headerTimeoutMs / 1000)), headerTimeoutMs);
  };
  let body = req.body;
  if (body === null) startClock();
  else body = countFromEnd(body, req.headers.get("Content-Length"), startClock);
  try {
    const res = await fetcher(pathAt < 0 ? `${instanceUrl}/` : instanceUrl + url.slice(pathAt), {
      method: req.method,
      headers,
      body,
      redirect: "manual",
      signal: controller.signal,
    });
    if (res.status === 101 && isWebSocketUpgrade(req.headers)) return res;
    const out = new Response(res.body, res);
    dropHopByHopHeaders(out.headers);
    return out;
  } catch (err) {
    if (controller.signal.aborted) throw controller.signal.reason instanceof InstanceTimeout ? controller.signal.reason : err;
    throw err;
  } finally {
    answered = true;
    clearTimeout(timer);
  }
}

/**
 * The request body as the instance reads it, calling `ended` once the instance has read all of
 * it. The runtime's identity streams resolve a write only when the other side has read it, so the
 * pipe ends when the last byte has gone to the instance. A known length is kept (no switch to
 * chunked encoding, which some servers refuse).
 */
function countFromEnd(body: ReadableStream<Uint8Array>, contentLength: string | null, ended: () => void): ReadableStream<Uint8Array> {
  const length = contentLength !== null && /^\d+$/.test(contentLength) ? Number(contentLength) : null;
  const pipe = length !== null && Number.isSafeInteger(length) ? new FixedLengthStream(length) : new IdentityTransformStream();
  body.pipeTo(pipe.writable).then(ended, () => undefined);
  return pipe.readable;
}
