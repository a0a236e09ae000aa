/** Reading replies and network failures into the shapes the decisions in `poll.ts` take. */
import { type Reply, parseRetryAfter } from "./poll";

/** The injected effects every request path uses, so tests can move the clock. */
export interface Effects {
  fetch: typeof fetch;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

/**
 * Reads a reply's status, Retry-After and, from a JSON body, the envelope's `code` and `status`.
 * The body is consumed unless the reply is a 2xx the caller still wants to stream; a 416's plain
 * text body is read and ignored. Returns the parsed JSON body too (the start reply's link).
 */
export async function readReply(res: Response, nowMs: number, keepSuccessBody = false): Promise<{ reply: Reply; body: unknown }> {
  const reply: Reply = { status: res.status };
  const retryAfter = parseRetryAfter(res.headers.get("retry-after"), nowMs);
  if (retryAfter !== undefined) reply.retryAfter = retryAfter;
  if (keepSuccessBody && res.ok) return { reply, body: undefined };
  const text = await res.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { reply, body: undefined };
  }
  if (body !== null && typeof body === "object") {
    const { code, status } = body as { code?: unknown; status?: unknown };
    if (typeof code === "string") reply.code = code;
    if (typeof status === "string") reply.exportStatus = status;
  }
  return { reply, body };
}

/** A short description of a network failure: the socket error code, never a URL. */
export function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string") return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** True for an error of the local file system (disk full, no permission), which retrying won't fix. */
export function isFileSystemError(error: unknown): boolean {
  return typeof (error as { syscall?: unknown } | undefined)?.syscall === "string";
}
