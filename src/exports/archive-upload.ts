import { toHex } from "../lib/encoding";
import { nextTurn } from "../lib/event-loop";
import { stagingKey } from "./store";

/**
 * Writing an archive to R2 with flat memory: the gzip bytes are hashed as they pass and cut into
 * equal parts; at most one part is held at a time.
 */

/** R2 refuses a multipart part below 5 MiB, except the last. */
export const R2_MIN_PART_BYTES = 5 * 1024 * 1024;
/** R2 accepts at most this many parts in one multipart upload. */
export const R2_MAX_PARTS = 10_000;
/** Our part size: 10 MiB keeps memory low and still allows archives up to ~100 GiB. */
export const ARCHIVE_PART_BYTES = 10 * 1024 * 1024;

/** Custom metadata on the archive object, checked against the D1 record on download. */
export interface ArchiveMetadata extends Record<string, string> {
  sha256: string;
  size: string;
}

/** What was stored: the archive's size and hash, as the D1 record keeps them. */
export interface UploadedArchive {
  size: number;
  /** SHA-256 of the stored (compressed) bytes, lowercase hex. */
  sha256: string;
}

/** Tuning and extra metadata for uploadArchive. */
export interface UploadOptions {
  /** Size of every part but the last; at least R2_MIN_PART_BYTES. */
  partBytes?: number;
  /** Extra custom metadata (e.g. ids) stored with sha256 and size. */
  metadata?: Record<string, string>;
  /**
   * Told of every multipart upload as it is created; `done` once it is completed or aborted. An
   * upload whose `done` never came (the isolate died) is left for whoever tracks it to abort.
   */
  track?: (upload: { key: string; uploadId: string }) => Promise<{ done: () => Promise<unknown> }>;
}

const HTTP_METADATA: R2HTTPMetadata = { contentType: "application/gzip" };

/**
 * Stores `bytes` at `key` with its size and SHA-256 in the object's custom metadata.
 *
 * An archive that fits in one part goes up in one put. A larger one needs a multipart upload,
 * but R2 fixes custom metadata when the upload is created, before the hash is known. So the parts
 * go to a staging object first; once the hash is known, a second multipart upload, created with
 * the metadata, copies them across from ranged reads of the staging object (no dump or gzip runs
 * twice), and the staging object is deleted. An upload that fails is aborted, never left behind.
 */
export async function uploadArchive(
  bucket: R2Bucket,
  key: string,
  bytes: ReadableStream<Uint8Array>,
  options: UploadOptions = {},
): Promise<UploadedArchive> {
  const partBytes = options.partBytes ?? ARCHIVE_PART_BYTES;
  if (partBytes < R2_MIN_PART_BYTES) throw new RangeError(`parts must be at least ${R2_MIN_PART_BYTES} bytes`);
  const digest = new crypto.DigestStream("SHA-256");
  const hasher = digest.getWriter();
  const parts = fixedParts(bytes, partBytes, (chunk) => hasher.write(chunk));
  const finish = async (size: number): Promise<UploadedArchive> => {
    await hasher.close();
    return { size, sha256: toHex(await digest.digest) };
  };

  try {
    const first = await parts.next();
    const second = first.done ? first : await parts.next();
    if (second.done) {
      const body = first.done ? new Uint8Array(0) : first.value;
      const archive = await finish(body.byteLength);
      await bucket.put(key, body, { httpMetadata: HTTP_METADATA, customMetadata: metadata(archive, options), sha256: archive.sha256 });
      return archive;
    }
    const all = (async function* () {
      yield first.value!;
      yield second.value;
      yield* parts;
    })();
    return await uploadStaged(bucket, key, all, partBytes, options.track ?? untracked, async (size) => metadata(await finish(size), options));
  } finally {
    // Stops reading the source if anything failed, which also ends the dump in the database.
    await parts.return();
  }
}

/** The multipart path: parts to a staging object, then copied under `key` with the metadata. */
async function uploadStaged(
  bucket: R2Bucket,
  key: string,
  parts: AsyncIterable<Uint8Array>,
  partBytes: number,
  track: NonNullable<UploadOptions["track"]>,
  describe: (size: number) => Promise<ArchiveMetadata>,
): Promise<UploadedArchive> {
  const staging = stagingKey(key);
  try {
    const staged = await uploadParts(await bucket.createMultipartUpload(staging, { httpMetadata: HTTP_METADATA }), parts, track);
    const customMetadata = await describe(staged.size);
    const copy = await bucket.createMultipartUpload(key, { httpMetadata: HTTP_METADATA, customMetadata });
    const copied = await uploadParts(copy, copyParts(bucket, staging, staged.size, partBytes), track);
    // Same bytes cut at the same places give the same multipart ETag: a cheap check of the copy.
    if (copied.etag !== staged.etag || copied.size !== staged.size) {
      await bucket.delete(key);
      throw new Error("the copied archive differs from the staged one");
    }
    return { size: staged.size, sha256: customMetadata.sha256 };
  } finally {
    await bucket.delete(staging);
  }
}

const untracked: NonNullable<UploadOptions["track"]> = async () => ({ done: async () => {} });

function metadata(archive: UploadedArchive, options: UploadOptions): ArchiveMetadata {
  return { ...options.metadata, sha256: archive.sha256, size: String(archive.size) };
}

/**
 * Cuts a byte stream into parts of exactly `partBytes` (the last may be shorter), passing every
 * chunk to `onChunk` first. Two part buffers take turns, so a large archive does not leave a
 * trail of part-sized garbage behind it: a yielded part stays intact until the part after the
 * next one is asked for (the caller holds at most two at once and is done with the older one by
 * then). The last, shorter part is a copy of its own.
 */
export async function* fixedParts(
  bytes: ReadableStream<Uint8Array>,
  partBytes: number,
  onChunk: (chunk: Uint8Array) => Promise<void> = async () => {},
): AsyncGenerator<Uint8Array<ArrayBuffer>, void, undefined> {
  const buffers: Uint8Array<ArrayBuffer>[] = [];
  let turn = 0;
  let part: Uint8Array<ArrayBuffer> | undefined;
  let filled = 0;
  for await (const chunk of bytes) {
    await onChunk(chunk);
    let offset = 0;
    while (offset < chunk.byteLength) {
      part ??= buffers[turn % 2] ??= new Uint8Array(partBytes);
      const take = Math.min(partBytes - filled, chunk.byteLength - offset);
      part.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === partBytes) {
        yield part;
        part = undefined;
        filled = 0;
        turn++;
      }
    }
  }
  if (part && filled > 0) yield part.slice(0, filled);
}

/** Uploads the parts in order and completes the upload; aborts it on any error. */
async function uploadParts(
  upload: R2MultipartUpload,
  parts: AsyncIterable<Uint8Array | ReadableStream>,
  track: NonNullable<UploadOptions["track"]>,
): Promise<{ size: number; etag: string }> {
  let tracked: Awaited<ReturnType<typeof track>> | undefined;
  try {
    tracked = await track({ key: upload.key, uploadId: upload.uploadId });
    const uploaded: R2UploadedPart[] = [];
    for await (const part of parts) {
      if (uploaded.length === R2_MAX_PARTS) throw new Error(`the archive needs more than ${R2_MAX_PARTS} parts`);
      uploaded.push(await upload.uploadPart(uploaded.length + 1, part));
      // A part is many megabytes moved between the Worker and the bucket binding: a turn of the
      // event loop between parts keeps the isolate's other requests answered during a long upload.
      await nextTurn();
    }
    const object = await upload.complete(uploaded);
    await tracked.done();
    return { size: object.size, etag: object.etag };
  } catch (err) {
    // An abort that fails stays tracked, so it is tried again later.
    // A record left behind only costs the sweep one abort of an upload that no longer exists.
    if (await upload.abort().then(() => true, () => false)) await tracked?.done().catch(() => {});
    throw err;
  }
}

/** The staging object again, as ranged reads aligned on the part size. */
async function* copyParts(bucket: R2Bucket, key: string, size: number, partBytes: number): AsyncGenerator<ReadableStream> {
  for (let offset = 0; offset < size; offset += partBytes) {
    const part = await bucket.get(key, { range: { offset, length: Math.min(partBytes, size - offset) } });
    if (!part) throw new Error("the staged archive disappeared during the copy");
    yield part.body;
  }
}
