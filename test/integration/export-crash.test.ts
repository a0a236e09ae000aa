import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { managedDatabase } from "../../src/databases/service";
import { R2_MIN_PART_BYTES } from "../../src/exports/archive-upload";
import { exportGate } from "../../src/exports/export-gate";
import type { ExportJobMessage } from "../../src/exports/messages";
import { RUNNER_SILENCE_MS, SILENT_REASON } from "../../src/exports/runner-watch";
import { runSweep } from "../../src/exports/sweep";
import { clockedApp, exportIdOf, recordExportJobs } from "./api-helpers";
import { downloadClient, linkFor } from "./download-helpers";
import { journalObjects } from "./dump-helpers";
import { T0, deliver, exportRow, pendingExport, randomRowsSql, sha256Of } from "./export-helpers";
import { accountWithToken } from "./helpers";

// Exports after a crash: a runner silent for a minute gets its job queued once more, which goes on
// from the last checkpoint; silent again, the export fails (404) and the database is free. The
// link never answers 503 for ever, and nothing waits for the deadline (82.5 minutes).

const MIN = RUNNER_SILENCE_MS;
const MiB = 1024 * 1024;
const RETENTION = Number(env.ARCHIVE_RETENTION_SECONDS);
/** About 12 MB of SQL: several invocations of BUDGET each. */
const DATA = randomRowsSql(6);
const BUDGET = 4 * MiB;
const lost = async () => {};

let jobs: ReturnType<typeof recordExportJobs>;
beforeEach(() => {
  // The queue lost its messages with the runner: only the test delivers what was sent.
  jobs = recordExportJobs({ deliver: false });
});
afterEach(() => jobs.restore());

/** One invocation at `at`, whose continuation message is lost (the runner died right after its checkpoint). */
function invocation(job: ExportJobMessage, at: number, options: Parameters<typeof deliver>[2] = {}) {
  return deliver(job, 1, { partBytes: R2_MIN_PART_BYTES, budgetBytes: BUDGET, enqueue: lost, now: () => at, ...options });
}

async function stepOf(exportId: string) {
  return (await env.DB.prepare("SELECT step, revivals, runner_alive_at FROM exports WHERE id = ?").bind(exportId).first<{ step: number; revivals: number; runner_alive_at: number }>())!;
}

describe("an export whose runner died", () => {
  it("is queued again once after a minute's silence, goes on from its checkpoint and ends with its archive", async () => {
    const { job, exportId, key, databaseId } = await pendingExport(DATA);
    const died = T0 + 20_000;
    await invocation(job, T0 + 10_000);
    await invocation(job, died);
    expect(await stepOf(exportId)).toEqual({ step: 2, revivals: 0, runner_alive_at: died });

    const gate = exportGate(env, databaseId);
    expect(await gate.watch(databaseId, died + MIN - 1)).toBe("wait");
    expect(jobs.sent).toEqual([]);
    expect(await gate.watch(databaseId, died + MIN)).toBe("revive");
    // Looked at twice (the alarm, a start, the sweep): still one message.
    expect(await gate.watch(databaseId, died + MIN)).toBe("wait");
    expect(jobs.sent).toEqual([job]);
    const url = await linkFor(databaseId, exportId, T0, 3 * 3600);
    const client = downloadClient(env, died + MIN + 1000);
    expect((await client.ask(url)).res.status).toBe(503);

    // The revived try goes on at checkpoint 2, not from the start.
    let at = died + MIN + 1000;
    const queued: ExportJobMessage[] = [...jobs.sent];
    while (queued.length > 0) {
      await invocation(queued.shift()!, (at += 1000), { enqueue: async (m) => void queued.push(m) });
      if (queued.length > 0) expect((await stepOf(exportId)).revivals).toBe(0);
    }
    const row = await exportRow(exportId);
    expect(row).toMatchObject({ status: "ready" });
    expect((await stepOf(exportId)).step).toBeGreaterThanOrEqual(3);
    client.clock.now = at + 1000;
    const { res, body } = await client.ask(url);
    expect(res.status).toBe(200);
    expect(await sha256Of(body)).toBe(row!.sha256);
    expect(await env.ARCHIVES.head(key)).not.toBeNull();
    expect(await gate.watch(databaseId, at + 10 * MIN)).toBe("none");
  }, 120_000);

  it("fails when silent again a minute after its revival: the link answers 404, the dump lease goes, a new start is taken", async () => {
    const { token, databaseId, client: console } = await accountWithToken();
    await console.json("POST", `/console/api/databases/${databaseId}/sql`, { sql: DATA });
    const app = clockedApp(T0);
    const exportId = exportIdOf((await (await app.startExport(token, databaseId)).json<{ url: string }>()).url);
    const died = T0 + 5_000;
    await invocation(jobs.sent[0]!, died);
    const db = managedDatabase(env, databaseId);
    expect(await journalObjects(db)).not.toEqual([]);

    // The cron's sweep wakes the gate too, should its alarm be lost.
    await runSweep(env, died + MIN, RETENTION);
    expect(jobs.sent.filter((m) => m.exportId === exportId)).toHaveLength(2);
    app.clock.now = died + 2 * MIN - 1;
    expect(await (await app.startExport(token, databaseId)).json()).toMatchObject({ code: "export_in_flight" });
    const url = await linkFor(databaseId, exportId, T0, 3 * 3600);
    const link = downloadClient(env, died + 2 * MIN - 1);
    expect((await link.ask(url)).res.status).toBe(503);

    expect(await exportGate(env, databaseId).watch(databaseId, died + 2 * MIN)).toBe("fail");
    expect(await exportRow(exportId)).toMatchObject({ status: "failed", finished_at: died + 2 * MIN, failure_reason: SILENT_REASON });
    link.clock.now = died + 2 * MIN;
    expect((await link.ask(url)).json()).toMatchObject({ code: "NOT_FOUND" });
    expect(await journalObjects(db)).toEqual([]);
    app.clock.now = died + 2 * MIN;
    expect((await app.startExport(token, databaseId)).status).toBe(200);
    // The dead export's message, should it come after all, does nothing.
    const late = await deliver(jobs.sent[1], 1, { now: () => died + 3 * MIN });
    expect(late.explicitAcks).toHaveLength(1);
    expect(await exportRow(exportId)).toMatchObject({ status: "failed" });
  }, 120_000);

  it("whose message was lost before any try: a start finds it silent, queues it again, and after a second minute starts anew", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp(T0);
    const first = exportIdOf((await (await app.startExport(token, databaseId)).json<{ url: string }>()).url);
    app.clock.now = T0 + MIN;
    expect(await (await app.startExport(token, databaseId)).json()).toMatchObject({ code: "export_in_flight" });
    expect(jobs.sent).toHaveLength(2);
    app.clock.now = T0 + 2 * MIN;
    expect((await app.startExport(token, databaseId)).status).toBe(200);
    expect(await exportRow(first)).toMatchObject({ status: "failed", failure_reason: SILENT_REASON });
    expect(jobs.sent).toHaveLength(3);
  });
});

describe("a working runner", () => {
  it("writes its heartbeat as it works, so the watch leaves it alone", async () => {
    const { job, exportId } = await pendingExport(DATA);
    const seen: number[] = [];
    // What the record says when the try writes the carry it leaves for the next invocation, after its dump stretch.
    const watching = bucketWith({ put: async () => void seen.push((await stepOf(exportId)).runner_alive_at) });
    let clock = T0;
    // Every reading of the clock moves it a second on: the try takes minutes of this clock.
    await deliver(job, 1, { env: { ...env, ARCHIVES: watching }, partBytes: R2_MIN_PART_BYTES, budgetBytes: BUDGET, enqueue: lost, now: () => (clock += 1000) });
    expect(seen).toHaveLength(1);
    // Claimed at T0 + 1 s; beats since, each 10 s of this clock after the one before.
    expect(seen[0]).toBeGreaterThan(T0 + 20_000);
    const row = await stepOf(exportId);
    expect(row.step).toBe(1);
    expect(await exportGate(env, job.databaseId).watch(job.databaseId, row.runner_alive_at + MIN - 1)).toBe("wait");
  }, 60_000);

  it("stops at its next beat once its export was failed meanwhile, leaving no archive", async () => {
    const { job, exportId, key } = await pendingExport(DATA);
    // Failed (by the watch, say) once the try has its first part ready.
    let uploads = 0;
    const failing = bucketWith({
      create: async () => void (uploads++, await env.DB.prepare("UPDATE exports SET status = 'failed' WHERE id = ?").bind(exportId).run()),
    });
    let clock = T0;
    const whole = { partBytes: R2_MIN_PART_BYTES, budgetBytes: 1024 * MiB, enqueue: lost };
    const result = await deliver(job, 1, { env: { ...env, ARCHIVES: failing }, ...whole, now: () => (clock += 1000) });
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);
    // It never went on to copy the archive under its key (a second upload).
    expect(uploads).toBe(1);
    expect(await exportRow(exportId)).toMatchObject({ status: "failed" });
    expect(await env.ARCHIVES.head(key)).toBeNull();
  }, 60_000);

  it("leaves the archive alone when another try made the export ready first", async () => {
    const { job, exportId, key } = await pendingExport("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);");
    // The archive fits one put; right after it, the other try records the export ready.
    const raced = bucketWith({
      put: async () => void (await env.DB.prepare("UPDATE exports SET status = 'ready', sha256 = 'x', size_bytes = 1 WHERE id = ?").bind(exportId).run()),
    });
    await deliver(job, 1, { env: { ...env, ARCHIVES: raced } });
    expect(await exportRow(exportId)).toMatchObject({ status: "ready" });
    expect(await env.ARCHIVES.head(key)).not.toBeNull();
  });
});

describe("the gate's alarm", () => {
  it("looks at the runner on its own", async () => {
    const { token, databaseId } = await accountWithToken();
    // Started (on the real clock) a minute and a second ago; its message was lost.
    const app = clockedApp(Date.now() - MIN - 1000);
    const exportId = exportIdOf((await (await app.startExport(token, databaseId)).json<{ url: string }>()).url);
    // The alarm is due already: run it now if the runtime has not yet.
    await runDurableObjectAlarm(exportGate(env, databaseId));
    await expect.poll(async () => (await stepOf(exportId)).revivals, { timeout: 5000 }).toBe(1);
    expect(jobs.sent).toHaveLength(2);
  });
});

/** The bucket, with hooks run before some of its calls. */
function bucketWith(hooks: { create?: () => Promise<void>; put?: () => Promise<void> }): R2Bucket {
  const bucket = env.ARCHIVES;
  return Object.assign(Object.create(bucket) as R2Bucket, {
    get: bucket.get.bind(bucket),
    head: bucket.head.bind(bucket),
    list: bucket.list.bind(bucket),
    delete: bucket.delete.bind(bucket),
    put: async (...args: Parameters<R2Bucket["put"]>) => {
      const stored = await bucket.put(...args);
      await hooks.put?.();
      return stored;
    },
    createMultipartUpload: async (k: string, options?: R2MultipartOptions) => {
      await hooks.create?.();
      return bucket.createMultipartUpload(k, options);
    },
    resumeMultipartUpload: bucket.resumeMultipartUpload.bind(bucket),
  });
}
