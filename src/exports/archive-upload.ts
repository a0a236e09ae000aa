import { DUMP_START, type DumpPosition } from "../databases/dump";
import { nextTurn } from "../lib/event-loop";
import { Sha256 } from "../lib/sha256";
import { fixedParts, prepend } from "./fixed-parts";
import type { ExportProgress, TrackedObject } from "./progress";

/**
 * Writing an archive to R2 over as many queue invocations as it takes, with flat memory: each
 * invocation's gzip bytes are hashed as they pass and cut into equal parts; at most two parts are
 * held at a time. What is left after the last full part (the carry) waits in a small R2 object for
 * the next invocation, because R2 wants every part but the last to be the same size.
 *
 * R2 fixes an object's custom metadata when its upload is created, before the hash is known. So
 * the parts go to a staging object first; once the hash is known, a second multipart upload,
 * created with the metadata, copies them across from ranged reads of the staging object (no dump
 * or gzip runs twice), also over as many invocations as it takes, and the staging object is deleted.
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

/** Where one archive goes, and the bookkeeping of R2 work it may leave owed (cleanup.ts). */
export interface ArchiveTarget {
  bucket: R2Bucket;
  key: string;
  /** Size of every part but the last; at least R2_MIN_PART_BYTES. */
  partBytes: number;
  /** Extra custom metadata (e.g. ids) stored with sha256 and size. */
  metadata: Record<string, string>;
  /** Records a new multipart upload as owed an abort; returns the record's id. */
  trackUpload: (key: string, uploadId: string) => Promise<string>;
  /** Records an object about to be written as owed a deletion. */
  trackObject: (key: string) => Promise<TrackedObject>;
  /** Forgets records whose work is no longer owed. */
  untrack: (ids: string[]) => Promise<void>;
  /** Deletes tracked objects now (what fails stays owed). */
  drop: (objects: TrackedObject[]) => Promise<void>;
  /** Called as the work goes on (each archive piece, each part copied): the runner's heartbeat; may throw to stop it. */
  beat?: () => Promise<void>;
}

/** One invocation's outcome: the finished archive, or a checkpoint to go on from. */
export type Stretch =
  | { archive: UploadedArchive }
  | {
      progress: ExportProgress;
      /** The earlier carry, used up: delete it once the checkpoint is stored (not before). */
      spent: TrackedObject | null;
    };

const HTTP_METADATA: R2HTTPMetadata = { contentType: "application/gzip" };

/** Where the carry of an archive waits between invocations; a fresh name each time, so a stale try cannot overwrite it. */
export function carryKey(stagingKey: string): string {
  return `${stagingKey}.carry-${crypto.randomUUID()}`;
}

/** The checkpoint an export starts from. */
export function freshProgress(): ExportProgress {
  return { dump: DUMP_START, hash: new Sha256().state(), size: 0, staging: null, carry: null, copy: null };
}

/**
 * Appends `member` (this invocation's gzip member, which ends where the dump text handed to it
 * ends) to the archive after the checkpoint `from`. `dumpNext` is read once `member` has ended: where
 * the dump goes on, or null when it is all done. Returns the next checkpoint, or once the dump is
 * done, the archive when it fits in one part, else the checkpoint of the copy to come.
 */
export async function stageStretch(
  target: ArchiveTarget,
  stagingKey: string,
  from: ExportProgress,
  member: ReadableStream<Uint8Array>,
  dumpNext: () => DumpPosition | null,
): Promise<Stretch> {
  if (target.partBytes < R2_MIN_PART_BYTES) throw new RangeError(`parts must be at least ${R2_MIN_PART_BYTES} bytes`);
  const hash = new Sha256(from.hash);
  let size = from.size;
  const carried = from.carry ? await readCarry(target.bucket, from.carry.key, from.size % target.partBytes) : new Uint8Array(0);
  const hashed = member.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        hash.update(chunk);
        size += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );

  let staging = from.staging && { ...from.staging, parts: [...from.staging.parts] };
  let upload = staging && target.bucket.resumeMultipartUpload(stagingKey, staging.uploadId);
  let rest: Uint8Array | undefined;
  // The pieces are the archive's own (gzip's output, the carry read back): freed once copied.
  const parts = fixedParts(prepend(carried, hashed), target.partBytes, target.beat, { release: true });
  try {
    for await (const part of parts) {
      if (part.byteLength < target.partBytes) {
        rest = part;
        break;
      }
      if (!staging || !upload) {
        upload = await target.bucket.createMultipartUpload(stagingKey, { httpMetadata: HTTP_METADATA });
        staging = { uploadId: upload.uploadId, trackId: await target.trackUpload(stagingKey, upload.uploadId), parts: [] };
      }
      staging.parts.push(await uploadPart(upload, staging.parts.length + 1, part));
    }
  } finally {
    // Stops reading the source if anything failed, which also ends the dump in the database.
    await parts.return();
  }

  const dump = dumpNext();
  if (dump !== null) {
    const carry = rest ? await writeCarry(target, stagingKey, rest) : null;
    return { progress: { dump, hash: hash.state(), size, staging, carry, copy: null }, spent: from.carry };
  }
  const state = hash.state();
  const sha256 = hash.hex();
  const metadata = describe(target, { size, sha256 });
  if (!staging || !upload) {
    // The whole archive is this one part: it goes up in one put, metadata and all.
    const body = rest ?? new Uint8Array(0);
    await target.bucket.put(target.key, body, { httpMetadata: HTTP_METADATA, customMetadata: metadata, sha256 });
    if (from.carry) await target.drop([from.carry]);
    return { archive: { size, sha256 } };
  }
  if (rest) staging.parts.push(await uploadPart(upload, staging.parts.length + 1, rest));
  const staged = await upload.complete(staging.parts);
  await target.untrack([staging.trackId]);
  const copy = { sha256, staged: { size: staged.size, etag: staged.etag }, upload: null };
  return { progress: { dump: null, hash: state, size, staging, carry: null, copy }, spent: from.carry };
}

/**
 * Copies the staged parts under the archive's key, with the metadata, from the checkpoint `from`;
 * stops after `budgetBytes` (at least one part) with the next checkpoint, or returns the archive.
 */
export async function copyStretch(target: ArchiveTarget, stagingKey: string, from: ExportProgress, budgetBytes: number): Promise<Stretch> {
  const copy = from.copy;
  if (!copy) throw new Error("the archive is not staged yet");
  const { size, etag } = copy.staged;
  if (copy.upload) {
    // A try that died after completing the copy, before its export was recorded ready.
    const done = await target.bucket.head(target.key);
    if (done?.etag === etag && done.size === size) return copyDone(target, stagingKey, copy.sha256, size);
  }
  let uploadState = copy.upload && { ...copy.upload, parts: [...copy.upload.parts] };
  let upload: R2MultipartUpload;
  if (uploadState) {
    upload = target.bucket.resumeMultipartUpload(target.key, uploadState.uploadId);
  } else {
    const customMetadata = describe(target, { size, sha256: copy.sha256 });
    upload = await target.bucket.createMultipartUpload(target.key, { httpMetadata: HTTP_METADATA, customMetadata });
    uploadState = { uploadId: upload.uploadId, trackId: await target.trackUpload(target.key, upload.uploadId), parts: [] };
  }
  let copied = 0;
  for (let offset = uploadState.parts.length * target.partBytes; offset < size; offset += target.partBytes) {
    if (copied > 0 && copied >= budgetBytes) {
      return { progress: { ...from, copy: { ...copy, upload: uploadState } }, spent: null };
    }
    await target.beat?.();
    const length = Math.min(target.partBytes, size - offset);
    const part = await target.bucket.get(stagingKey, { range: { offset, length } });
    if (!part) throw new Error("the staged archive disappeared during the copy");
    uploadState.parts.push(await uploadPart(upload, uploadState.parts.length + 1, part.body));
    copied += length;
  }
  const object = await upload.complete(uploadState.parts);
  await target.untrack([uploadState.trackId]);
  // Same bytes cut at the same places give the same multipart ETag: a cheap check of the copy.
  if (object.etag !== etag || object.size !== size) {
    await target.bucket.delete(target.key);
    throw new Error("the copied archive differs from the staged one");
  }
  return copyDone(target, stagingKey, copy.sha256, size);
}

async function copyDone(target: ArchiveTarget, stagingKey: string, sha256: string, size: number): Promise<Stretch> {
  await target.bucket.delete(stagingKey);
  return { archive: { size, sha256 } };
}

function describe(target: ArchiveTarget, archive: UploadedArchive): ArchiveMetadata {
  return { ...target.metadata, sha256: archive.sha256, size: String(archive.size) };
}

async function uploadPart(upload: R2MultipartUpload, number: number, part: Uint8Array | ReadableStream): Promise<R2UploadedPart> {
  if (number > R2_MAX_PARTS) throw new Error(`the archive needs more than ${R2_MAX_PARTS} parts`);
  const uploaded = await upload.uploadPart(number, part);
  // A part is many megabytes moved between the Worker and the bucket binding: a turn of the
  // event loop between parts keeps the isolate's other requests answered during a long upload.
  await nextTurn();
  return { partNumber: uploaded.partNumber, etag: uploaded.etag };
}

async function readCarry(bucket: R2Bucket, key: string, expected: number): Promise<Uint8Array> {
  const object = await bucket.get(key);
  const bytes = object ? new Uint8Array(await object.arrayBuffer()) : null;
  if (bytes?.byteLength !== expected) throw new Error("the archive's carried bytes are missing or damaged");
  return bytes;
}

async function writeCarry(target: ArchiveTarget, stagingKey: string, bytes: Uint8Array): Promise<TrackedObject> {
  const carry = await target.trackObject(carryKey(stagingKey));
  await target.bucket.put(carry.key, bytes);
  return carry;
}
