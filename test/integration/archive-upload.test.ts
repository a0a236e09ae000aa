import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fixedParts, R2_MIN_PART_BYTES, uploadArchive } from "../../src/exports/archive-upload";
import { stagingKey } from "../../src/exports/store";
import { sha256Of } from "./export-helpers";

const MiB = 1024 * 1024;

/** `total` pseudo-random bytes in uneven chunks, then (optionally) an error instead of the end. */
function source(total: number, failAfter = false): { stream: ReadableStream<Uint8Array>; bytes: Uint8Array } {
  const bytes = new Uint8Array(total);
  for (let i = 0; i < total; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(total, i + 65536)));
  let offset = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= total) {
        if (failAfter) controller.error(new Error("source broke"));
        else controller.close();
        return;
      }
      const size = Math.min(total - offset, 300_000 + (offset % 7) * 1000);
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
  return { stream, bytes };
}

/** The real bucket, remembering the multipart uploads it creates so a test can look at them after. */
function recordingBucket() {
  const uploads: R2MultipartUpload[] = [];
  const real = env.ARCHIVES;
  const bucket = {
    head: real.head.bind(real),
    get: real.get.bind(real),
    put: real.put.bind(real),
    delete: real.delete.bind(real),
    list: real.list.bind(real),
    resumeMultipartUpload: real.resumeMultipartUpload.bind(real),
    async createMultipartUpload(key: string, options?: R2MultipartOptions) {
      const upload = await real.createMultipartUpload(key, options);
      uploads.push(upload);
      return upload;
    },
  } as R2Bucket;
  return { bucket, uploads };
}

describe("fixedParts", () => {
  it("cuts a stream into equal parts whatever the chunking, the last one shorter", async () => {
    const chunks = [3, 1, 7, 2, 9].map((n, i) => new Uint8Array(n).fill(i));
    const seen: number[] = [];
    const parts: Uint8Array[] = [];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        chunks.forEach((c) => controller.enqueue(c));
        controller.close();
      },
    });
    for await (const part of fixedParts(stream, 5, async (c) => void seen.push(c.byteLength))) parts.push(part.slice());
    expect(parts.map((p) => p.byteLength)).toEqual([5, 5, 5, 5, 2]);
    expect(parts.map((p) => Array.from(p).join(""))).toEqual(["00012", "22222", "23344", "44444", "44"]);
    expect(seen).toEqual([3, 1, 7, 2, 9]);
  });

  it("takes turns between two buffers: a part is intact until the part after next is asked for", async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++) controller.enqueue(new Uint8Array(4).fill(i));
        controller.close();
      },
    });
    const parts = fixedParts(stream, 4);
    const first = (await parts.next()).value!;
    const second = (await parts.next()).value!;
    expect([Array.from(first), Array.from(second)]).toEqual([[0, 0, 0, 0], [1, 1, 1, 1]]);
    const third = (await parts.next()).value!;
    expect(third.buffer).toBe(first.buffer);
    expect(Array.from(second)).toEqual([1, 1, 1, 1]);
    expect(Array.from(third)).toEqual([2, 2, 2, 2]);
    expect((await parts.next()).value!.buffer).toBe(second.buffer);
    expect((await parts.next()).done).toBe(true);
  });
});

describe("uploadArchive", () => {
  it("puts a small archive in one go with its hash and size", async () => {
    const key = `test/${crypto.randomUUID()}.gz`;
    const { stream, bytes } = source(1000);
    const result = await uploadArchive(env.ARCHIVES, key, stream, { partBytes: R2_MIN_PART_BYTES });
    const object = await env.ARCHIVES.get(key);
    expect(result).toEqual({ size: 1000, sha256: await sha256Of(bytes) });
    expect(new Uint8Array(await object!.arrayBuffer())).toEqual(bytes);
    expect(object!.customMetadata).toEqual({ sha256: result.sha256, size: "1000" });
  });

  it("uploads a large archive in equal parts and copies it under its key with the metadata", async () => {
    const key = `test/${crypto.randomUUID()}.gz`;
    const total = 2 * R2_MIN_PART_BYTES + 12345;
    const { stream, bytes } = source(total);
    const result = await uploadArchive(env.ARCHIVES, key, stream, { partBytes: R2_MIN_PART_BYTES, metadata: { export_id: "e1" } });
    const object = await env.ARCHIVES.get(key);
    expect(result).toEqual({ size: total, sha256: await sha256Of(bytes) });
    expect(await sha256Of(await object!.arrayBuffer())).toBe(result.sha256);
    expect(object!.customMetadata).toEqual({ export_id: "e1", sha256: result.sha256, size: String(total) });
    expect(object!.etag).toMatch(/-3$/);
    expect(await env.ARCHIVES.head(stagingKey(key))).toBeNull();
   }, 60_000);

  it("aborts the multipart upload and stores nothing when the source breaks midway", async () => {
    const key = `test/${crypto.randomUUID()}.gz`;
    const { bucket, uploads } = recordingBucket();
    const { stream } = source(2 * R2_MIN_PART_BYTES + 2 * MiB, true);
    await expect(uploadArchive(bucket, key, stream, { partBytes: R2_MIN_PART_BYTES })).rejects.toThrow("source broke");
    expect(uploads).toHaveLength(1);
    // An aborted upload takes no more parts.
    const resumed = env.ARCHIVES.resumeMultipartUpload(uploads[0]!.key, uploads[0]!.uploadId);
    await expect(resumed.uploadPart(1, new Uint8Array(10))).rejects.toThrow();
    expect(await env.ARCHIVES.head(key)).toBeNull();
    expect(await env.ARCHIVES.head(stagingKey(key))).toBeNull();
  });

  it("refuses parts smaller than R2 accepts", async () => {
    await expect(uploadArchive(env.ARCHIVES, "test/x", source(10).stream, { partBytes: 1024 })).rejects.toThrow(RangeError);
  });
});
