import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { R2_MIN_PART_BYTES } from "../../src/exports/archive-upload";
import { stagingKey } from "../../src/exports/store";
import { EXPORT_DLQ, EXPORT_MAX_ATTEMPTS, retryDelaySeconds } from "../../src/exports/job-limits";
import { clockedApp, recordExportJobs } from "./api-helpers";
import { T0, deliver, exportRow, gunzipText, pendingExport, randomRowsSql, sha256Of } from "./export-helpers";
import { accountWithToken } from "./helpers";

/** R2 refuses keys longer than 1024 bytes: an export id this long makes every upload fail for real. */
const unstorableId = () => `${crypto.randomUUID()}-${"x".repeat(1100)}`;

describe("export job", () => {
  it("dumps, gzips and stores the archive, then records it ready", async () => {
    const { job, exportId, key } = await pendingExport("CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (9223372036854775807, 'it''s');");
    const result = await deliver(job);
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);

    const row = await exportRow(exportId);
    const object = await env.ARCHIVES.get(key);
    const bytes = await object!.arrayBuffer();
    expect(row).toMatchObject({ status: "ready", started_at: T0 + 60_000, finished_at: T0 + 60_000, attempts: 1, size_bytes: bytes.byteLength });
    expect(row!.sha256).toBe(await sha256Of(bytes));
    expect(row!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(object!.customMetadata).toEqual({ sha256: row!.sha256, size: String(bytes.byteLength), export_id: exportId, database_id: job.databaseId });
    expect(object!.httpMetadata?.contentType).toBe("application/gzip");
    const sql = await gunzipText(bytes);
    expect(sql).toMatch(/^PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n/);
    expect(sql).toContain(`INSERT INTO "t"("a","b") VALUES(9223372036854775807,'it''s');`);
    expect(sql.endsWith("COMMIT;\n")).toBe(true);
  });

  it("uploads a large archive in equal multipart parts and still records size and hash in the metadata", async () => {
    const { job, exportId, key } = await pendingExport(randomRowsSql(12));
    await deliver(job, 1, { partBytes: R2_MIN_PART_BYTES });
    const row = await exportRow(exportId);
    const object = await env.ARCHIVES.get(key);
    const bytes = await object!.arrayBuffer();
    expect(bytes.byteLength).toBeGreaterThan(2 * R2_MIN_PART_BYTES);
    expect(row).toMatchObject({ status: "ready", size_bytes: bytes.byteLength, sha256: await sha256Of(bytes) });
    expect(object!.customMetadata).toMatchObject({ sha256: row!.sha256, size: String(bytes.byteLength) });
    // Three parts of 5 MiB, 5 MiB and the rest.
    expect(object!.etag).toMatch(/-3$/);
    expect(await env.ARCHIVES.head(stagingKey(key))).toBeNull();
   }, 60_000);

  it("retries a failed try with backoff and leaves the export running", async () => {
    const { job, exportId } = await pendingExport(undefined, unstorableId());
    const result = await deliver(job, 2);
    expect(result.retryMessages).toHaveLength(1);
    expect(result.retryOptions).toEqual([{ delaySeconds: retryDelaySeconds(2) }]);
    expect(result.explicitAcks).toEqual([]);
    expect(await exportRow(exportId)).toMatchObject({ status: "running", attempts: 2, failure_reason: null });
  });

  it("marks the export failed after the last try", async () => {
    const { job, exportId } = await pendingExport(undefined, unstorableId());
    const result = await deliver(job, EXPORT_MAX_ATTEMPTS);
    expect(result.retryMessages).toEqual([]);
    expect(result.explicitAcks).toHaveLength(1);
    const row = await exportRow(exportId);
    expect(row).toMatchObject({ status: "failed", finished_at: T0 + 60_000, attempts: EXPORT_MAX_ATTEMPTS });
    expect(row!.failure_reason).toBeTruthy();
  });

  it("marks the export failed when its message reaches the dead-letter queue", async () => {
    const { job, exportId, key } = await pendingExport("CREATE TABLE t (a);");
    const result = await deliver(job, 1, { queue: EXPORT_DLQ });
    expect(result.explicitAcks).toHaveLength(1);
    expect(await exportRow(exportId)).toMatchObject({ status: "failed" });
    expect(await env.ARCHIVES.head(key)).toBeNull();
  });

  it("does nothing for a redelivered message of a ready or failed export", async () => {
    const ready = await pendingExport("CREATE TABLE t (a); INSERT INTO t VALUES (1);");
    await deliver(ready.job);
    const before = { row: await exportRow(ready.exportId), etag: (await env.ARCHIVES.head(ready.key))!.etag };
    await ready.client.json("POST", `/console/api/databases/${ready.databaseId}/sql`, { sql: "INSERT INTO t VALUES (2);" });
    const again = await deliver(ready.job, 2, { now: () => T0 + 999_000 });
    expect(again.explicitAcks).toHaveLength(1);
    expect(await exportRow(ready.exportId)).toEqual(before.row);
    expect((await env.ARCHIVES.head(ready.key))!.etag).toBe(before.etag);

    const failed = await pendingExport(undefined, unstorableId());
    await deliver(failed.job, EXPORT_MAX_ATTEMPTS);
    const failedRow = await exportRow(failed.exportId);
    expect((await deliver(failed.job, EXPORT_MAX_ATTEMPTS + 1)).explicitAcks).toHaveLength(1);
    expect(await exportRow(failed.exportId)).toEqual(failedRow);
  });

  it("lets a new export of the database start at once after a failure", async () => {
    const jobs = recordExportJobs({ deliver: false });
    try {
      const { token, databaseId } = await accountWithToken();
      const { startExport } = clockedApp(T0);
      expect((await startExport(token, databaseId)).status).toBe(200);
      expect(await (await startExport(token, databaseId)).json()).toMatchObject({ code: "export_in_flight" });
      await deliver(jobs.sent[0], 1, { queue: EXPORT_DLQ });
      expect((await startExport(token, databaseId)).status).toBe(200);
    } finally {
      jobs.restore();
    }
  });

  it("drops a message without export and database ids", async () => {
    const result = await deliver({ nope: true });
    expect(result.explicitAcks).toHaveLength(1);
  });
});

describe("retryDelaySeconds", () => {
  it.each([
    [1, 10],
    [2, 20],
    [3, 40],
    [4, 80],
    [6, 300],
    [20, 300],
  ])("after try %i waits %i s", (attempts, seconds) => {
    expect(retryDelaySeconds(attempts)).toBe(seconds);
  });
});
