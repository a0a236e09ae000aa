import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createApp } from "../../src/app";
import { createDownloadLink } from "../../src/auth/links";
import { getConfig } from "../../src/config";
import { API_ORIGIN } from "./api-helpers";
import { T0, deliver, pendingExport } from "./export-helpers";

/** The job in export-helpers finishes at this time. */
export const READY_AT = T0 + 60_000;

/** The app on a clock the test moves; `ask` reads the whole body before the request's background work is awaited. */
export function downloadClient(bindings: Env = env, start = READY_AT + 1000) {
  const clock = { now: start };
  const app = createApp({ now: () => clock.now, uuid: () => crypto.randomUUID() });
  async function ask(url: string, init: RequestInit = {}) {
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request(url, init), bindings, ctx);
    // A multipart body is written in waitUntil as it is read, so read first, then wait.
    const body = new Uint8Array(await res.arrayBuffer());
    await waitOnExecutionContext(ctx);
    return { res, body, text: () => new TextDecoder().decode(body), json: () => JSON.parse(new TextDecoder().decode(body)) };
  }
  return { clock, ask };
}

/** A signed link as the start request would return it, made at `now`. */
export async function linkFor(databaseId: string, exportId: string, now = T0, ttlSeconds = 3600) {
  const link = await createDownloadLink({ keys: getConfig(env).LINK_SIGNING_KEYS, origin: API_ORIGIN, databaseId, exportId, now, ttlSeconds });
  return link.url;
}

/** A ready export of a database holding `sql`, with its link and the stored archive's bytes. */
export async function readyExport(sql = "CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two');") {
  const made = await pendingExport(sql);
  await deliver(made.job);
  const object = await env.ARCHIVES.get(made.key);
  const archive = new Uint8Array(await object!.arrayBuffer());
  return { ...made, archive, url: await linkFor(made.databaseId, made.exportId) };
}

/** Splits a multipart/byteranges body into parts with their headers and bytes. */
export function parseMultipart(body: Uint8Array, contentType: string) {
  const boundary = /boundary=(.+)$/.exec(contentType)![1]!;
  // Latin-1 keeps one character per byte, so offsets in the text are offsets in the body.
  const text = Array.from(body, (b) => String.fromCharCode(b)).join("");
  const parts: { headers: Record<string, string>; bytes: Uint8Array }[] = [];
  let at = text.indexOf(`--${boundary}\r\n`);
  while (at !== -1) {
    const headEnd = text.indexOf("\r\n\r\n", at);
    const headers = Object.fromEntries(
      text.slice(at, headEnd).split("\r\n").slice(1).map((line) => [line.split(": ")[0]!.toLowerCase(), line.split(": ")[1]!]),
    );
    const next = text.indexOf(`\r\n--${boundary}`, headEnd);
    parts.push({ headers, bytes: body.slice(headEnd + 4, next) });
    at = text.startsWith(`\r\n--${boundary}--`, next) ? -1 : next + 2;
  }
  return { parts, closed: text.endsWith(`\r\n--${boundary}--\r\n`), startsWithBoundary: text.startsWith(`--${boundary}\r\n`) };
}
