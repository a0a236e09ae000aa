/**
 * A small HTTP client for the Docker Engine API: negotiates the API version once, builds
 * versioned paths, and maps transport failures and 5xx replies to `RuntimeUnavailableError`.
 * Uses only `fetch`, so it runs in workerd and in Node alike.
 */
import { RuntimeUnavailableError } from "./types";

/** An engine reply the caller did not expect (a 4xx other than the ones it handles). */
export class DockerEngineError extends Error {
  override readonly name = "DockerEngineError";
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface DockerRequest {
  query?: Record<string, string>;
  /** JSON to send, or a stream (sent as-is with the given content type). */
  json?: unknown;
  stream?: ReadableStream<Uint8Array>;
  contentType?: string;
  /** Statuses the caller handles itself besides 2xx (e.g. 404 for "missing is fine"). */
  accept?: number[];
  /** No time limit (builds and other long streams). */
  untimed?: boolean;
  /** A time limit of its own instead of REQUEST_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Ends the request and its reply stream (a build's deadline). */
  signal?: AbortSignal;
}

/** Ordinary calls (create, stop with its grace period, inspect) finish well within this. */
const REQUEST_TIMEOUT_MS = 60_000;
/**
 * `GET /_ping` does no work on the engine's side: one that takes longer than this is as good as
 * down, and saying so early keeps the operator's report (and the first call of each client) from
 * hanging for a whole REQUEST_TIMEOUT_MS.
 */
export const PING_TIMEOUT_MS = 10_000;

export class DockerEngineClient {
  private readonly base: string;
  private readonly fetcher: typeof fetch;
  private version: Promise<string> | undefined;

  constructor(url: string, fetcher: typeof fetch = (input, init) => fetch(input, init)) {
    this.base = url.replace(/\/+$/, "");
    this.fetcher = fetcher;
  }

  /** The engine's API version from `GET /_ping` (header `Api-Version`); asks again each call. */
  async ping(): Promise<string> {
    const res = await this.send("GET", `${this.base}/_ping`, { timeoutMs: PING_TIMEOUT_MS });
    await res.arrayBuffer();
    const version = res.headers.get("Api-Version");
    if (!version || !/^\d+\.\d+$/.test(version)) {
      throw new RuntimeUnavailableError("The container engine did not report its API version.");
    }
    this.version = Promise.resolve(version);
    return version;
  }

  /**
   * Sends one versioned request. Docker 29 refuses API versions older than it supports, so the
   * version the engine itself reports is used rather than a pinned one; it is cached per client.
   */
  async request(method: string, path: string, req: DockerRequest = {}): Promise<Response> {
    const version = await this.apiVersion();
    const query = req.query ? `?${new URLSearchParams(req.query)}` : "";
    return this.send(method, `${this.base}/v${version}${path}${query}`, req);
  }

  /** Like `request`, then reads a JSON body. */
  async json<T>(method: string, path: string, req: DockerRequest = {}): Promise<{ status: number; body: T }> {
    const res = await this.request(method, path, req);
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  private apiVersion(): Promise<string> {
    this.version ??= this.ping().catch((error: unknown) => {
      // Forget the failure so the next call asks the engine again.
      this.version = undefined;
      throw error;
    });
    return this.version;
  }

  private async send(method: string, url: string, req: DockerRequest): Promise<Response> {
    const headers: Record<string, string> = {};
    let body: BodyInit | undefined;
    if (req.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(req.json);
    } else if (req.stream) {
      headers["Content-Type"] = req.contentType ?? "application/octet-stream";
      body = req.stream;
    }
    // Node's fetch requires `duplex: "half"` for a stream body; workerd ignores the field.
    const init = { method, headers, body, ...(req.stream ? { duplex: "half" } : {}) } as RequestInit;
    const signals = [...(req.untimed ? [] : [AbortSignal.timeout(req.timeoutMs ?? REQUEST_TIMEOUT_MS)]), ...(req.signal ? [req.signal] : [])];
    if (signals.length > 0) init.signal = signals.length === 1 ? signals[0] : AbortSignal.any(signals);
    let res: Response;
    try {
      res = await this.fetcher(url, init);
    } catch (error) {
      const timedOut = error instanceof Error && error.name === "TimeoutError";
      // A call its caller gave up on (a closed log stream) says so, not that the engine is down.
      const reason = timedOut ? "did not answer in time" : req.signal?.aborted ? "call was cancelled by its caller" : "could not be reached";
      throw new RuntimeUnavailableError(`The container engine ${reason} (${method} ${routeOf(url)}).`);
    }
    if (res.ok || req.accept?.includes(res.status)) return res;
    const message = await engineMessage(res);
    if (res.status >= 500) {
      throw new RuntimeUnavailableError(`The container engine failed ${method} ${routeOf(url)} with ${res.status}: ${message}`);
    }
    throw new DockerEngineError(res.status, `The container engine refused ${method} ${routeOf(url)} with ${res.status}: ${message}`);
  }
}

/** The engine's error sentence from a reply body (`{"message": ...}`), or the status text. */
export async function engineMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return text.trim().slice(0, 300) || res.statusText || `HTTP ${res.status}`;
}

/** The path of a URL without host or query: enough to say which call failed, never credentials. */
function routeOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return "(unparseable URL)";
  }
}
