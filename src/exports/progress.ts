import { z } from "zod";
import type { DumpPosition } from "../databases/dump";
import type { Sha256State } from "../lib/sha256";

/**
 * A running export's checkpoint, kept in its D1 record (`exports.progress`) between queue
 * invocations. Everything before it is in R2 for good; an invocation starts from it and either
 * writes the next one or finishes the export. What the invocation did after it (a crash half way)
 * is simply done again: the same dump position under the same dump lease gives the same text.
 */
export interface ExportProgress {
  /** Where the dump goes on; null once it has all been read and staged. */
  dump: DumpPosition | null;
  /** SHA-256 of every archive byte produced so far, the carry's included. */
  hash: Sha256State;
  /** Archive bytes produced so far, the carry's included. */
  size: number;
  /** The staging object's multipart upload and the parts it holds for good; null until the first full part. */
  staging: TrackedUpload | null;
  /** The archive bytes after the last full part (shorter than a part), waiting in R2 for the next invocation. */
  carry: TrackedObject | null;
  /** Once the dump is all staged: the copy under the archive's key, with the metadata the hash completes. */
  copy: CopyProgress | null;
}

/** A multipart upload that an r2_cleanup row (`trackId`) aborts if the export ends without it. */
export interface TrackedUpload {
  uploadId: string;
  trackId: string;
  parts: R2UploadedPart[];
}

/** An object that an r2_cleanup row (`trackId`) deletes if nobody else does. */
export interface TrackedObject {
  key: string;
  trackId: string;
}

export interface CopyProgress {
  sha256: string;
  /** The completed staging object's size and ETag: the copy must come out the same. */
  staged: { size: number; etag: string };
  upload: TrackedUpload | null;
}

const part = z.object({ partNumber: z.number().int().positive(), etag: z.string() });
const upload = z.object({ uploadId: z.string(), trackId: z.string(), parts: z.array(part) });
const object = z.object({ key: z.string(), trackId: z.string() });
const ProgressSchema = z.object({
  dump: z.object({ table: z.number().int(), after: z.array(z.string()).nullable(), offset: z.number().int(), rows: z.number().int().optional() }).nullable(),
  hash: z.object({ h: z.array(z.number().int()), length: z.number().int(), tail: z.string() }),
  size: z.number().int(),
  staging: upload.nullable(),
  carry: object.nullable(),
  copy: z.object({ sha256: z.string(), staged: z.object({ size: z.number().int(), etag: z.string() }), upload: upload.nullable() }).nullable(),
});

/** A checkpoint as D1 keeps it; null for none. Throws on text that is not one. */
export function readProgress(text: string | null): ExportProgress | null {
  return text === null ? null : ProgressSchema.parse(JSON.parse(text));
}

export function writeProgress(progress: ExportProgress): string {
  return JSON.stringify(progress);
}
