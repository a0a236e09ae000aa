import { env } from "cloudflare:workers";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { managedDatabase } from "../../src/databases/service";
import { R2_MIN_PART_BYTES } from "../../src/exports/archive-upload";
import { settleOwedWork } from "../../src/exports/cleanup";
import { inFlightExportNamed } from "../../src/exports/store";
import { deadlineFor } from "../../src/exports/job-limits";
import type { ExportJobMessage } from "../../src/exports/messages";
import { archiveKey, stagingKey } from "../../src/exports/store";
import { journalFullMessage } from "../../src/databases/snapshot-journal";
import { freshDatabase, journalObjects, restoreDump, snapshot } from "./dump-helpers";
import { T0, deliver, exportRow, pendingExport, sha256Of } from "./export-helpers";

const MiB = 1024 * 1024;
/** SQL bytes per invocation: the dump below (about 21 MB of SQL) takes several. */
const BUDGET = 4 * MiB;

/** A database with every kind of object the dump's tail carries, and random rows gzip cannot shrink. */
const SAMPLE = `CREATE TABLE noise (id INTEGER PRIMARY KEY, bytes BLOB);
  WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 640) INSERT INTO noise SELECT x, randomblob(16384) FROM n;
  CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, price REAL, big INTEGER);
  CREATE TABLE audit (item INTEGER);
  CREATE TRIGGER items_audit AFTER INSERT ON items BEGIN INSERT INTO audit VALUES (new.id); END;
  WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 3000)
  INSERT INTO items (name, price, big) SELECT 'item ' || x || ' it''s', x * 1.1, 9223372036854775807 - x FROM n;
  DELETE FROM items WHERE id > 2990;`;

/** Delivers the export's message, then every message the job sends for its next invocation, as the queue would. */
async function runToTheEnd(first: ExportJobMessage, options: Parameters<typeof deliver>[2] = {}) {
  const queued = [first];
  let invocations = 0;
  while (queued.length > 0) {
    invocations++;
    if (invocations > 50) throw new Error("the export never finished");
    const sent: ExportJobMessage[] = [];
    const result = await deliver(queued.shift(), 1, { partBytes: R2_MIN_PART_BYTES, budgetBytes: BUDGET, ...options, enqueue: async (m) => void sent.push(m) });
    expect(result.retryMessages).toEqual([]);
    queued.push(...sent);
  }
  return invocations;
}

async function checkpointOf(exportId: string) {
  return env.DB.prepare("SELECT step, progress, deadline_at FROM exports WHERE id = ?")
    .bind(exportId)
    .first<{ step: number; progress: string | null; deadline_at: number }>();
}

/** The archive as stored, checked against its record, and the database it restores to. */
async function archiveOf(exportId: string, key: string) {
  const object = await env.ARCHIVES.get(key);
  const bytes = new Uint8Array(await object!.arrayBuffer());
  const row = await exportRow(exportId);
  expect(row).toMatchObject({ status: "ready", size_bytes: bytes.byteLength, sha256: await sha256Of(bytes) });
  expect(object!.customMetadata).toMatchObject({ sha256: row!.sha256, size: String(bytes.byteLength) });
  // node's gunzip, like gunzip(1), reads every member of a multi-member file.
  const sql = gunzipSync(bytes).toString("utf8");
  const copy = freshDatabase();
  await restoreDump(copy.stub, sql);
  return { bytes, sha256: row!.sha256!, sql, restored: await snapshot(copy.stub) };
}

/** Objects left under the export's staging key (carries included) and uploads it still owes. */
async function leftovers(key: string, exportId: string) {
  const listed = await env.ARCHIVES.list({ prefix: stagingKey(key) });
  const owed = await env.DB.prepare("SELECT count(*) AS n FROM r2_cleanup WHERE export_id = ?").bind(exportId).first<{ n: number }>();
  return { objects: listed.objects.map((o) => o.key), owed: owed!.n };
}

describe("an export over several invocations", () => {
  it("stores a checkpoint per invocation and ends with one archive whose hash matches and which restores row for row", async () => {
    const { job, exportId, key, databaseId } = await pendingExport(SAMPLE);
    const invocations = await runToTheEnd(job);
    expect(invocations).toBeGreaterThanOrEqual(5);
    const checkpoint = await checkpointOf(exportId);
    expect(checkpoint).toMatchObject({ step: invocations - 1, progress: null });

    const archive = await archiveOf(exportId, key);
    expect(archive.bytes.byteLength).toBeGreaterThan(2 * R2_MIN_PART_BYTES);
    expect(archive.sql).toMatch(/^PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n/);
    expect(archive.sql.endsWith("COMMIT;\n")).toBe(true);
    expect(archive.sql.match(/^COMMIT;$/gm)).toHaveLength(1);
    expect(archive.restored).toEqual(await snapshot(managedDatabase(env, databaseId)));
    expect(archive.restored.rows["items"]).toHaveLength(2990);
    expect(archive.restored.rows["audit"]).toHaveLength(3000);
    expect(archive.restored.rows["noise"]).toHaveLength(640);
    expect(await leftovers(key, exportId)).toEqual({ objects: [], owed: 0 });
  }, 120_000);

  it("gives the same archive, byte for byte, when an invocation dies after some parts and its retry goes on", async () => {
    const whole = await pendingExport(SAMPLE);
    await runToTheEnd(whole.job);
    const reference = await archiveOf(whole.exportId, whole.key);

    // A second export of the same database.
    const { job, exportId, key } = await anotherExport(whole.databaseId);
    // Two invocations go through; the third uploads one part and dies on its second.
    for (let i = 0; i < 2; i++) {
      const sent: ExportJobMessage[] = [];
      await deliver(job, 1, { partBytes: R2_MIN_PART_BYTES, budgetBytes: BUDGET, enqueue: async (m) => void sent.push(m) });
      expect(sent).toHaveLength(1);
    }
    const before = await checkpointOf(exportId);
    let parts = 0;
    const dying = { ...env, ARCHIVES: partsThenDeath(env.ARCHIVES, 1, () => parts++) } as Env;
    const crashed = await deliver(job, 1, { env: dying, partBytes: R2_MIN_PART_BYTES, budgetBytes: 1024 * MiB, enqueue: async () => {} });
    expect(parts).toBe(1);
    expect(crashed.retryMessages).toHaveLength(1);
    // Nothing of the dead invocation counts: the checkpoint is the one it started from.
    expect(await checkpointOf(exportId)).toEqual(before);

    await runToTheEnd(job);
    const resumed = await archiveOf(exportId, key);
    expect(resumed.sha256).toBe(reference.sha256);
    expect(resumed.restored).toEqual(reference.restored);
    // The staging upload the dead invocation began is in no checkpoint; the sweep aborts it.
    expect(await leftovers(key, exportId)).toEqual({ objects: [], owed: 1 });
    await settleOwedWork(env, inFlightExportNamed);
    expect(await leftovers(key, exportId)).toEqual({ objects: [], owed: 0 });
  }, 180_000);

  it("answers the database's writes between invocations, and the archive is the snapshot of the export's start", async () => {
    const { job, exportId, key, databaseId } = await pendingExport(SAMPLE);
    const db = managedDatabase(env, databaseId);
    const before = await snapshot(db);
    await deliver(job, 1, { partBytes: R2_MIN_PART_BYTES, budgetBytes: BUDGET, enqueue: async () => {} });
    const write = await db.execute("INSERT INTO items (name) VALUES ('written during the export'); UPDATE items SET price = -1 WHERE id > 2900; DELETE FROM noise WHERE id > 600");
    expect(write.ok).toBe(true);
    await runToTheEnd(job);
    const archive = await archiveOf(exportId, key);
    expect(archive.sql).not.toContain("written during the export");
    expect(archive.restored).toEqual(before);
  }, 120_000);

  it("fails at once, saying why, when writes outgrow the snapshot journal's bound, and the database keeps answering", async () => {
    const { job, exportId, databaseId } = await pendingExport(SAMPLE);
    const db = managedDatabase(env, databaseId);
    const small = { ...env, EXPORT_JOURNAL_MAX_BYTES: "20000" } as Env;
    await deliver(job, 1, { env: small, partBytes: R2_MIN_PART_BYTES, budgetBytes: BUDGET, enqueue: async () => {} });
    expect((await db.execute("UPDATE items SET price = 0")).ok).toBe(true);
    await runToTheEnd(job, { env: small });
    expect(await exportRow(exportId)).toMatchObject({ status: "failed", failure_reason: journalFullMessage(20_000) });
    expect(await journalObjects(db)).toEqual([]);
    expect(await db.execute("SELECT count(*) FROM items WHERE price = 0")).toMatchObject({ ok: true, results: [{ rows: [[2990]] }] });
  }, 120_000);

  it("starts the dump over when its lease lapsed between invocations, and still ends with one consistent archive", async () => {
    const { job, exportId, key, databaseId } = await pendingExport(SAMPLE);
    const db = managedDatabase(env, databaseId);
    await deliver(job, 1, { partBytes: R2_MIN_PART_BYTES, budgetBytes: BUDGET, enqueue: async () => {} });
    await deliver(job, 1, { partBytes: R2_MIN_PART_BYTES, budgetBytes: BUDGET, enqueue: async () => {} });
    // As if the lease had run out: writes go through, so the dump so far is no longer a snapshot.
    await db.releaseDump(exportId);
    expect((await db.execute("INSERT INTO items (name) VALUES ('written while the lease had lapsed')")).ok).toBe(true);
    await runToTheEnd(job);
    const archive = await archiveOf(exportId, key);
    expect(archive.sql).toContain("written while the lease had lapsed");
    expect(archive.sql.match(/BEGIN TRANSACTION;/g)).toHaveLength(1);
    expect(archive.restored).toEqual(await snapshot(db));
    expect(await leftovers(key, exportId)).toEqual({ objects: [], owed: 0 });
  }, 120_000);

  it("moves the deadline on at each checkpoint, so a long export is not failed while it makes progress", async () => {
    const { job, exportId } = await pendingExport(SAMPLE);
    const late = T0 + 70 * 60_000;
    await deliver(job, 1, { partBytes: R2_MIN_PART_BYTES, budgetBytes: BUDGET, enqueue: async () => {}, now: () => late });
    expect((await checkpointOf(exportId))!.deadline_at).toBe(deadlineFor(late));
    expect(deadlineFor(late)).toBeGreaterThan(deadlineFor(T0));
  }, 60_000);
});

async function anotherExport(databaseId: string) {
  const exportId = crypto.randomUUID();
  await env.DB.prepare("INSERT INTO exports (id, database_id, status, created_at, deadline_at) VALUES (?, ?, 'pending', ?, ?)")
    .bind(exportId, databaseId, T0, deadlineFor(T0))
    .run();
  return { exportId, job: { exportId, databaseId }, key: archiveKey(databaseId, exportId) };
}

/** `bucket`, whose multipart uploads take `parts` parts and then fail every further one, as if the invocation died. */
function partsThenDeath(bucket: R2Bucket, parts: number, onPart: () => void): R2Bucket {
  let left = parts;
  const wrap = (upload: R2MultipartUpload): R2MultipartUpload => ({
    uploadId: upload.uploadId,
    key: upload.key,
    uploadPart: async (number: number, value: Parameters<R2MultipartUpload["uploadPart"]>[1]) => {
      if (left-- <= 0) throw new Error("the invocation died");
      onPart();
      return upload.uploadPart(number, value);
    },
    complete: upload.complete.bind(upload),
    abort: upload.abort.bind(upload),
  });
  return Object.assign(Object.create(bucket) as R2Bucket, {
    get: bucket.get.bind(bucket),
    put: bucket.put.bind(bucket),
    head: bucket.head.bind(bucket),
    list: bucket.list.bind(bucket),
    delete: bucket.delete.bind(bucket),
    createMultipartUpload: async (key: string, options?: R2MultipartOptions) => wrap(await bucket.createMultipartUpload(key, options)),
    resumeMultipartUpload: (key: string, uploadId: string) => wrap(bucket.resumeMultipartUpload(key, uploadId)),
  });
}
