import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { R2_MIN_PART_BYTES } from "../../src/exports/archive-upload";
import { EXPORT_MAX_ATTEMPTS } from "../../src/exports/job-limits";
import { stagingKey } from "../../src/exports/store";
import { runSweep } from "../../src/exports/sweep";
import { T0, deliver, exportRow, pendingExport, randomRowsSql } from "./export-helpers";
import { readyExport } from "./download-helpers";

// Issue 16, nothing orphaned: no staged object, multipart upload or archive outlives its export.

const RETENTION = Number(env.ARCHIVE_RETENTION_SECONDS);
const bucket = Object.getPrototypeOf(env.ARCHIVES) as R2Bucket;

afterEach(() => vi.restoreAllMocks());

async function owedRows() {
  return (await env.DB.prepare("SELECT key, upload_id, export_id FROM r2_cleanup ORDER BY created_at").all<{ key: string; upload_id: string | null }>()).results;
}

describe("nothing orphaned", () => {
  it("a failed export leaves no staging object, and an upload whose abort failed is aborted by the sweep", async () => {
    const { job, exportId, key } = await pendingExport(randomRowsSql(11));
    const create = bucket.createMultipartUpload;
    let copyUploadId = "";
    // The copy under the final key breaks, and so does its abort: as if the isolate had died.
    vi.spyOn(bucket, "createMultipartUpload").mockImplementation(async function (this: R2Bucket, k, options) {
      const upload = await create.call(this, k, options);
      if (k.endsWith(".staging")) return upload;
      copyUploadId = upload.uploadId;
      const broken = () => Promise.reject(new Error("R2 unavailable"));
      return { key: upload.key, uploadId: upload.uploadId, uploadPart: broken, abort: broken, complete: broken } as unknown as R2MultipartUpload;
    });
    await deliver(job, EXPORT_MAX_ATTEMPTS, { partBytes: R2_MIN_PART_BYTES });
    vi.restoreAllMocks();

    expect(await exportRow(exportId)).toMatchObject({ status: "failed" });
    expect(await env.ARCHIVES.head(stagingKey(key))).toBeNull();
    expect(await env.ARCHIVES.head(key)).toBeNull();
    expect(await owedRows()).toContainEqual(expect.objectContaining({ key, upload_id: copyUploadId }));

    await runSweep(env, T0 + 120_000, RETENTION);
    expect((await owedRows()).filter((r) => r.key === key)).toEqual([]);
    await expect(env.ARCHIVES.resumeMultipartUpload(key, copyUploadId).uploadPart(1, "x")).rejects.toThrow();
  }, 60_000);

  it("an export whose database was deleted while it ran leaves no archive", async () => {
    const { job, exportId, key, databaseId } = await pendingExport("CREATE TABLE t (a); INSERT INTO t VALUES (1);");
    const put = bucket.put;
    vi.spyOn(bucket, "put").mockImplementation(async function (this: R2Bucket, ...args: Parameters<R2Bucket["put"]>) {
      // The database goes (its export record with it) between the dump and the store.
      await env.DB.prepare("DELETE FROM databases WHERE id = ?").bind(databaseId).run();
      return put.apply(this, args);
    } as R2Bucket["put"]);
    const result = await deliver(job);
    expect(result.explicitAcks).toHaveLength(1);
    expect(await exportRow(exportId)).toBeNull();
    expect(await env.ARCHIVES.head(key)).toBeNull();
  });

  it("deleting a database removes its archives even when R2 fails half way, through the sweep", async () => {
    const first = await readyExport();
    const del = bucket.delete;
    let calls = 0;
    vi.spyOn(bucket, "delete").mockImplementation(async function (this: R2Bucket, keys) {
      if (calls++ === 0) throw new Error("R2 unavailable");
      return del.call(this, keys);
    });
    const res = await first.client.call("DELETE", `/console/api/databases/${first.databaseId}`);
    expect(res.status).toBe(200);
    vi.restoreAllMocks();
    // The first deletion (the archive) failed and is still owed; the record is gone.
    expect(await env.ARCHIVES.head(first.key)).not.toBeNull();
    expect(await owedRows()).toContainEqual(expect.objectContaining({ key: first.key, upload_id: null }));

    await runSweep(env, Date.now(), RETENTION);
    expect(await env.ARCHIVES.head(first.key)).toBeNull();
    expect((await owedRows()).filter((r) => r.key === first.key)).toEqual([]);
  });
});
