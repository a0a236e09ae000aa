import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { createApp } from "../../src/app";
import type { ExportJobMessage } from "../../src/exports/messages";

export const API_ORIGIN = "http://api.test";

/** The Worker's bindings with some settings changed, as wrangler vars would change them. */
export function envWith(vars: Record<string, string>): Env {
  return { ...env, ...vars } as Env;
}

/**
 * The app with a clock the test moves (`clock.now`, Unix ms) and every log line written. Requests run to completion,
 * including work the handler left in `waitUntil`.
 */
export function clockedApp(start = Date.UTC(2030, 0, 1, 12)) {
  const clock = { now: start };
  // Every log line written (none sampled away), as the checks on log lines read them.
  const app = createApp({ now: () => clock.now, uuid: () => crypto.randomUUID(), random: () => 0 });
  async function call(request: Request, bindings: Env = env): Promise<Response> {
    const ctx = createExecutionContext();
    const res = await app.fetch(request, bindings, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  }
  function startExport(token: string | null, databaseId: string, bindings?: Env, init: RequestInit = {}) {
    const headers = new Headers(init.headers);
    if (token !== null) headers.set("Authorization", `Bearer ${token}`);
    return call(new Request(`${API_ORIGIN}/api/v1/dbs/${databaseId}/export`, { method: "POST", ...init, headers }), bindings);
  }
  return { clock, call, startExport };
}

/** What `send` reports for a message the test kept back. */
const NOT_DELIVERED: QueueSendResponse = { metadata: { metrics: { backlogCount: 0, backlogBytes: 0, oldestMessageTimestamp: new Date(0) } } };

/**
 * Records every message sent to EXPORT_JOBS. The gate object runs in the test's isolate and uses
 * the same binding object, so a spy on it sees the gate's sends. `deliver: false` keeps the
 * messages from the consumer, so only the test moves an export's status; `fail: true` makes the
 * send throw as an unavailable queue would.
 */
export function recordExportJobs(options: { deliver: boolean; fail?: boolean }) {
  const sent: ExportJobMessage[] = [];
  const queue = Object.getPrototypeOf(env.EXPORT_JOBS) as Queue<ExportJobMessage>;
  const original = queue.send;
  const spy = vi.spyOn(queue, "send").mockImplementation(async function (this: Queue, body, sendOptions) {
    if (options.fail) throw new Error("queue unavailable");
    sent.push(body);
    return options.deliver ? original.call(this, body, sendOptions) : NOT_DELIVERED;
  });
  return { sent, restore: () => spy.mockRestore() };
}

/** The export ids of a database's rows in D1, with status and created_at. */
export async function exportRows(databaseId: string) {
  const { results } = await env.DB.prepare("SELECT id, status, created_at FROM exports WHERE database_id = ? ORDER BY created_at")
    .bind(databaseId)
    .all<{ id: string; status: string; created_at: number }>();
  return results;
}

/** Moves an export as the export job would. */
export async function setExportStatus(exportId: string, status: "running" | "ready" | "failed" | "expired") {
  await env.DB.prepare("UPDATE exports SET status = ? WHERE id = ?").bind(status, exportId).run();
}

/** The export id inside a download link. */
export function exportIdOf(url: string): string {
  const match = /\/exports\/([0-9a-f-]{36})\/download$/.exec(new URL(url).pathname);
  if (!match) throw new Error(`not a download link: ${url}`);
  return match[1]!;
}
