/**
 * What the bench asks of the Worker under test: an account and token through the console's JSON
 * routes, databases filled with the dataset recipe, exports started and polled through the public
 * API until their link serves the archive.
 */
import { Console } from "../lib/seed";
import { type Recipe, mixedRecipe } from "./dataset";

/** A signed-in console session and an API token of the same account. */
export interface BenchAccount {
  base: string;
  console: Console;
  token: string;
}

/** Signs up a fresh account and issues its API token. */
export async function createAccount(base: string, email: string): Promise<BenchAccount> {
  const console = new Console(base);
  await console.ok("POST", "/console/api/signup", { email, password: "bench-password-1" });
  const { token } = await console.ok<{ token: string }>("POST", "/console/api/tokens", { name: "bench" });
  return { base, console, token };
}

/** Creates an empty managed database; returns its id. */
export async function createDatabase(account: BenchAccount, name: string): Promise<string> {
  return (await account.console.ok<{ id: string }>("POST", "/console/api/databases", { name })).id;
}

/** Runs SQL in a managed database as one transaction; returns the first statement's rows. */
export async function runSql(account: BenchAccount, databaseId: string, sql: string): Promise<unknown[][]> {
  const reply = await account.console.ok<{ results: { rows: unknown[][] }[] }>("POST", `/console/api/databases/${databaseId}/sql`, { sql });
  return reply.results[0]?.rows ?? [];
}

/**
 * Fills a managed database with a recipe, or the mixed one up to about `rawBytes` (one request per batch,
 * each one transaction of a few MB generated inside SQLite); returns the raw size measured after.
 */
export async function fillDatabase(account: BenchAccount, databaseId: string, data: number | Recipe, onBatch?: (done: number, total: number) => void): Promise<number> {
  const recipe = typeof data === "number" ? mixedRecipe(data, "") : data;
  await runSql(account, databaseId, recipe.schema);
  const total = recipe.batches;
  for (let batch = 0; batch < total; batch++) {
    await runSql(account, databaseId, recipe.batchSql(batch));
    onBatch?.(batch + 1, total);
  }
  const [row] = await runSql(account, databaseId, recipe.rawSizeSql);
  return Number(row?.[0]);
}

/** A started export: its link and when the start request was sent (performance.now() ms). */
export interface StartedExport {
  url: string;
  startedAt: number;
  /** How long the start request took, ms. */
  startMs: number;
}

/** `POST /api/v1/dbs/{id}/export`; throws on anything but 200. */
export async function startExport(account: BenchAccount, databaseId: string): Promise<StartedExport> {
  const startedAt = performance.now();
  const res = await fetch(`${account.base}/api/v1/dbs/${databaseId}/export`, {
    method: "POST",
    headers: { Authorization: `Bearer ${account.token}` },
  });
  const body = (await res.json()) as { url?: string; code?: string };
  if (res.status !== 200 || !body.url) throw new Error(`start export answered ${res.status} ${body.code ?? ""}`);
  return { url: body.url, startedAt, startMs: performance.now() - startedAt };
}

/** A finished export as its link first served it. */
export interface ReadyExport {
  /** From the start request to the first reply that served archive bytes, ms. */
  totalMs: number;
  /** Archive size from `Content-Range`, bytes. */
  archiveBytes: number;
  sha256: string;
  /** 503 replies seen while waiting. */
  polls: number;
}

/**
 * Polls the link until it serves the archive. Each poll asks for the first byte only
 * (`Range: bytes=0-0`), so a finished export answers a tiny 206 whose `Content-Range` carries the
 * size. The bench polls more often than `Retry-After` asks (every 2% of the time elapsed so far,
 * 20 to 250 ms) so the measured time is within a few percent of the moment the export was ready.
 */
export async function waitUntilReady(started: StartedExport, timeoutMs = 3_600_000): Promise<ReadyExport> {
  let polls = 0;
  for (;;) {
    const res = await fetch(started.url, { headers: { Range: "bytes=0-0" } });
    await res.arrayBuffer();
    const elapsed = performance.now() - started.startedAt;
    if (res.status === 206 || res.status === 200) {
      const total = /\/(\d+)$/.exec(res.headers.get("content-range") ?? "")?.[1] ?? res.headers.get("content-length");
      return { totalMs: elapsed, archiveBytes: Number(total), sha256: res.headers.get("x-export-sha256") ?? "", polls };
    }
    if (res.status !== 503) throw new Error(`the download link answered ${res.status} while waiting for the export`);
    if (elapsed > timeoutMs) throw new Error(`the export was not ready after ${Math.round(elapsed / 1000)} s`);
    polls++;
    await new Promise((r) => setTimeout(r, Math.min(250, Math.max(20, elapsed * 0.02))));
  }
}
