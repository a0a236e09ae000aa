/**
 * Talking to a real `wrangler dev` the way a script would: start an export with a token, poll the
 * link, download. Plus reading a multipart/byteranges reply.
 */
import { createHash } from "node:crypto";

export const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** `POST /api/v1/dbs/{id}/export` with the token; the link it returns. */
export async function startExport(base: string, token: string, databaseId: string): Promise<string> {
  const res = await fetch(`${base}/api/v1/dbs/${databaseId}/export`, { method: "POST", headers: { Authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`start export answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { url: string }).url;
}

/** Polls the link as SPEC.md's client rules say (503 and 429 wait Retry-After) until it answers otherwise. */
export async function pollUntilReady(url: string, timeoutMs = 90_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(url, { method: "HEAD" });
    if (res.status !== 503 && res.status !== 429) return res;
    if (Date.now() > deadline) throw new Error(`the export was still not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, Number(res.headers.get("Retry-After") ?? 1) * 1000));
  }
}

export async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { res, body: new Uint8Array(await res.arrayBuffer()) };
}

/** The parts of a multipart/byteranges body with their Content-Range. */
export function parseMultipart(body: Uint8Array, contentType: string): { start: number; end: number; total: number; bytes: Uint8Array }[] {
  const boundary = /boundary=(\S+)/.exec(contentType)?.[1];
  if (!boundary) throw new Error(`no boundary in ${contentType}`);
  // Latin-1 maps each byte to one character, so text offsets are body offsets.
  const text = Buffer.from(body).toString("latin1");
  const parts = [];
  let at = text.indexOf(`--${boundary}\r\n`);
  while (at !== -1) {
    const headEnd = text.indexOf("\r\n\r\n", at);
    const range = /Content-Range: bytes (\d+)-(\d+)\/(\d+)/i.exec(text.slice(at, headEnd));
    if (!range) throw new Error("a part without Content-Range");
    const next = text.indexOf(`\r\n--${boundary}`, headEnd);
    parts.push({ start: Number(range[1]), end: Number(range[2]), total: Number(range[3]), bytes: body.slice(headEnd + 4, next) });
    at = text.startsWith(`\r\n--${boundary}--`, next) ? -1 : next + 2;
  }
  return parts;
}

/** A console session on the Worker, for creating databases and running SQL in them. */
export class ConsoleSession {
  private cookie = "";
  constructor(private readonly base: string) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.base + path, {
      method,
      headers: { Origin: this.base, "Content-Type": "application/json", ...(this.cookie ? { Cookie: this.cookie } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const set = res.headers.get("set-cookie");
    if (set) this.cookie = set.split(";")[0]!;
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  }

  /** Runs SQL in a database; the rows of the last statement. */
  /** A console page's HTML, as the signed-in browser gets it. */
  async page(path: string): Promise<string> {
    const res = await fetch(this.base + path, { headers: this.cookie ? { Cookie: this.cookie } : {} });
    if (!res.ok) throw new Error(`GET ${path} answered ${res.status}`);
    return res.text();
  }

  async sql(databaseId: string, sql: string): Promise<unknown[][]> {
    const { results } = await this.call<{ results: { rows: unknown[][] }[] }>("POST", `/console/api/databases/${databaseId}/sql`, { sql });
    return results[results.length - 1]?.rows ?? [];
  }
}
