import { archiveKey } from "./store";
import { type KeptArchives, keptArchives } from "./kept-archives";
import { randomBytes, sha256Hex, toHex, utf8 } from "../lib/encoding";
import { contentRange, multipartLayout } from "./multipart";
import { type ByteRange, ifRangeAllows, parseRangeHeader } from "./ranges";

/**
 * The archive download's success replies (docs/api.md, export rule 5: 200, 206, multipart 206, 416, HEAD),
 * streamed from R2. The body is never held: R2's stream goes straight into the reply.
 */

const ARCHIVE_TYPE = "application/gzip";

/** A ready export as D1 records it. */
export interface ReadyArchive {
  databaseId: string;
  exportId: string;
  size: number;
  sha256: string;
}

/** The parts of the download request that shape the reply. */
export interface ArchiveRequest {
  method: string;
  range: string | null;
  ifRange: string | null;
}

/** Runtime hooks for archiveResponse. */
export interface ArchiveResponseOptions {
  /** Keeps the worker alive while a multipart body is still being written. */
  waitUntil: (work: Promise<unknown>) => void;
  /** The multipart boundary; random unless a test fixes it. */
  boundary?: string;
  /** Where small archives are kept between requests (kept-archives.ts); the isolate's unless a test brings its own. */
  kept?: KeptArchives;
}

/** The stored archive is missing or is not the one the record describes. */
export class ArchiveUnreadable extends Error {
  override readonly name = "ArchiveUnreadable";
}

/** The strong ETag of an archive: its SHA-256, so it changes exactly when the bytes do. */
export function archiveEtag(sha256: string): string {
  return `"${sha256}"`;
}

/** Headers every success reply carries. */
export function archiveHeaders(archive: ReadyArchive): Record<string, string> {
  return {
    "Accept-Ranges": "bytes",
    "X-Export-SHA256": archive.sha256,
    ETag: archiveEtag(archive.sha256),
    "Content-Disposition": `attachment; filename="${archive.databaseId}-${archive.exportId}.sql.gz"`,
    "Cache-Control": "private, no-store",
  };
}

/** Throws ArchiveUnreadable unless the object is the archive the record describes. */
function checkObject(object: R2Object | null, archive: ReadyArchive): R2Object {
  if (!object) throw new ArchiveUnreadable("the archive object is missing");
  const meta = object.customMetadata ?? {};
  if (object.size !== archive.size || meta.size !== String(archive.size)) {
    throw new ArchiveUnreadable(`the archive object has ${object.size} bytes (metadata ${meta.size}), the record says ${archive.size}`);
  }
  if (meta.sha256 !== archive.sha256) throw new ArchiveUnreadable("the archive object's sha256 metadata differs from the record");
  return object;
}

/** Answers a GET or HEAD for a ready archive. Throws ArchiveUnreadable for a 500. */
export async function archiveResponse(
  bucket: R2Bucket,
  archive: ReadyArchive,
  request: ArchiveRequest,
  options: ArchiveResponseOptions,
): Promise<Response> {
  const key = archiveKey(archive.databaseId, archive.exportId);
  const headers = archiveHeaders(archive);
  const whole = { ...headers, "Content-Type": ARCHIVE_TYPE, "Content-Length": String(archive.size) };

  // HEAD answers what GET would for the whole archive; Range does not apply to it.
  if (request.method === "HEAD") {
    checkObject(await bucket.head(key), archive);
    return new Response(null, { status: 200, headers: whole });
  }

  const decision = ifRangeAllows(request.ifRange, archiveEtag(archive.sha256))
    ? parseRangeHeader(request.range, archive.size)
    : ({ kind: "full" } as const);

  if (decision.kind === "full") {
    const kept = options.kept ?? keptArchives;
    if (archive.size <= kept.maxBytes) return new Response(await smallArchive(bucket, key, archive, kept), { status: 200, headers: whole });
    const object = await bucket.get(key);
    return new Response(checkedBody(object, archive), { status: 200, headers: whole });
  }
  if (decision.kind === "unsatisfiable") {
    checkObject(await bucket.head(key), archive);
    // Only the size: nothing naming or describing the archive, which a client saving by the
    // server's file name would otherwise attach to this text.
    return new Response("The requested range is outside the archive. Download it again from the start.\n", {
      status: 416,
      headers: { "Content-Type": "text/plain; charset=utf-8", "Content-Range": `bytes */${archive.size}` },
    });
  }
  if (decision.ranges.length === 1) {
    const range = decision.ranges[0]!;
    const object = await bucket.get(key, { range: r2Range(range) });
    return new Response(checkedBody(object, archive), {
      status: 206,
      headers: { ...headers, "Content-Type": ARCHIVE_TYPE, "Content-Length": String(range.end - range.start + 1), "Content-Range": contentRange(range, archive.size) },
    });
  }
  const object = checkObject(await bucket.head(key), archive);
  const layout = multipartLayout(decision.ranges, archive.size, options.boundary ?? `dbx-${toHex(randomBytes(16))}`, ARCHIVE_TYPE);
  // A fixed-length stream makes the runtime send Content-Length instead of chunked encoding.
  const body = new FixedLengthStream(layout.length);
  options.waitUntil(writeParts(bucket, key, object.etag, layout, body.writable));
  return new Response(body.readable, {
    status: 206,
    headers: { ...headers, "Content-Type": layout.contentType, "Content-Length": String(layout.length) },
  });
}

/**
 * The bytes of a small archive: those kept, once a `head` finds the object still there and the
 * same (size, SHA-256 metadata, ETag); else read from R2, checked against the record's SHA-256,
 * and kept.
 */
async function smallArchive(bucket: R2Bucket, key: string, archive: ReadyArchive, kept: KeptArchives): Promise<Uint8Array> {
  const candidate = kept.get(key, archive.sha256);
  if (candidate && checkObject(await bucket.head(key), archive).etag === candidate.etag) return candidate.bytes;
  const object = await bucket.get(key);
  checkedBody(object, archive);
  const bytes = new Uint8Array(await object!.arrayBuffer());
  // The size was checked with the object; the digest covers the bytes themselves.
  if ((await sha256Hex(bytes)) !== archive.sha256) throw new ArchiveUnreadable("the archive object's bytes are not those the record describes");
  kept.set(key, { etag: object!.etag, sha256: archive.sha256, bytes });
  return bytes;
}

function checkedBody(object: R2ObjectBody | null, archive: ReadyArchive): ReadableStream {
  try {
    checkObject(object, archive);
  } catch (err) {
    // Not the archive we expected: let go of its body unread.
    void object?.body.cancel();
    throw err;
  }
  return object!.body;
}

function r2Range(range: ByteRange): R2Range {
  return { offset: range.start, length: range.end - range.start + 1 };
}

/**
 * Writes the multipart body: each part's header, then one ranged R2 read piped straight through.
 * Every read must still see the object the reply was planned from (same ETag); if it changed or
 * vanished the body is cut short, which the client sees as a failed download, never as wrong bytes.
 */
async function writeParts(
  bucket: R2Bucket,
  key: string,
  etag: string,
  layout: ReturnType<typeof multipartLayout>,
  out: WritableStream<Uint8Array>,
): Promise<void> {
  const writeText = async (text: string) => {
    const writer = out.getWriter();
    try {
      await writer.write(utf8(text));
    } finally {
      writer.releaseLock();
    }
  };
  try {
    for (const part of layout.parts) {
      await writeText(part.head);
      const object = await bucket.get(key, { range: r2Range(part.range), onlyIf: { etagMatches: etag } });
      if (!object || !("body" in object)) throw new ArchiveUnreadable("the archive changed while its parts were being sent");
      await object.body.pipeTo(out, { preventClose: true });
    }
    await writeText(layout.tail);
    await out.close();
  } catch (err) {
    await out.abort(err).catch(() => {});
  }
}
