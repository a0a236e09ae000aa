import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { handleExportBatch, type JobOptions } from "../../src/exports/job";
import { deadlineFor } from "../../src/exports/job-limits";
import type { ExportJobMessage } from "../../src/exports/messages";
import { archiveKey } from "../../src/exports/store";
import { toHex } from "../../src/lib/encoding";
import { vi } from "vitest";
import { accountWithToken } from "./helpers";

export const T0 = Date.UTC(2030, 0, 1, 12);

/** An account's database holding `sql`, and a pending export record for it (as the gate makes). */
export async function pendingExport(sql?: string, exportId: string = crypto.randomUUID()) {
  const account = await accountWithToken();
  if (sql) await account.client.json("POST", `/console/api/databases/${account.databaseId}/sql`, { sql });
  await env.DB.prepare("INSERT INTO exports (id, database_id, status, created_at, deadline_at) VALUES (?, ?, 'pending', ?, ?)")
    .bind(exportId, account.databaseId, T0, deadlineFor(T0))
    .run();
  const job: ExportJobMessage = { exportId, databaseId: account.databaseId };
  return { ...account, exportId, job, key: archiveKey(account.databaseId, exportId) };
}

/**
 * Delivers one message to the consumer as the queue would, and returns what it asked of the
 * queue. getQueueResult does not report a retry's delay, so the message's retry() is watched.
 */
export async function deliver(job: unknown, attempts = 1, options: Partial<JobOptions> & { queue?: string; env?: Env } = {}) {
  const batch = createMessageBatch(options.queue ?? "export-jobs", [{ id: crypto.randomUUID(), timestamp: T0, attempts, body: job }]);
  const retry = vi.spyOn(batch.messages[0]!, "retry");
  const ctx = createExecutionContext();
  await handleExportBatch(batch, options.env ?? env, { now: () => T0 + 60_000, ...options });
  return { ...(await getQueueResult(batch, ctx)), retryOptions: retry.mock.calls.map((call) => call[0]) };
}

export interface ExportRow {
  status: string;
  started_at: number | null;
  finished_at: number | null;
  size_bytes: number | null;
  sha256: string | null;
  attempts: number;
  failure_reason: string | null;
}

export async function exportRow(exportId: string): Promise<ExportRow | null> {
  return env.DB.prepare("SELECT status, started_at, finished_at, size_bytes, sha256, attempts, failure_reason FROM exports WHERE id = ?")
    .bind(exportId)
    .first<ExportRow>();
}

export async function sha256Of(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", bytes));
}

export async function gunzipText(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
}

/** SQL that fills a table with `megabytes` of random bytes, which gzip cannot shrink much. */
export function randomRowsSql(megabytes: number): string {
  return `CREATE TABLE noise (id INTEGER PRIMARY KEY, bytes BLOB);
    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ${megabytes * 4})
    INSERT INTO noise SELECT x, randomblob(262144) FROM n;`;
}
