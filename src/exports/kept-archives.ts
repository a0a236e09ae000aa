/**
 * Small ready archives kept in the isolate's memory, so a link polled again and again (a script's
 * loop, several machines pulling one small backup) is answered without reading the archive's
 * bytes from R2 each time. An archive never changes once ready, so what is kept is never stale;
 * what may change is whether it may still be served, and that is decided as before on every
 * request: the export record (kept per isolate for RECORD_KEEP_MS, the clock's rules applied at
 * each poll) and one `head` of the R2 object, which must still be there, with the size, the
 * SHA-256 and the ETag of the bytes kept. A database deleted in another isolate therefore answers
 * 404 here at once, as it did when every poll read the object.
 *
 * Only archives of KEPT_ARCHIVE_MAX_BYTES or less are kept, KEPT_ARCHIVES_TOTAL_BYTES at most in
 * all (the oldest kept dropped first): a few MB of the isolate's 128 MB. Bytes are kept only
 * after their SHA-256 was found to be the one the record holds.
 */

/** The largest archive kept in memory, bytes. */
export const KEPT_ARCHIVE_MAX_BYTES = 64 * 1024;
/** All archives kept in one isolate, bytes. */
export const KEPT_ARCHIVES_TOTAL_BYTES = 2 * 1024 * 1024;

/** One kept archive: its bytes and what they were checked against. */
export interface KeptArchive {
  /** The R2 object's ETag when the bytes were read. */
  etag: string;
  sha256: string;
  bytes: Uint8Array;
}

/** A bounded memory of archives by key, the oldest dropped first once `totalBytes` would be passed. */
export class KeptArchives {
  readonly #entries = new Map<string, KeptArchive>();
  #total = 0;

  constructor(
    readonly maxBytes = KEPT_ARCHIVE_MAX_BYTES,
    readonly totalBytes = KEPT_ARCHIVES_TOTAL_BYTES,
  ) {}

  /** The archive kept for `key`, if it has this `sha256`; its `etag` is still to be compared with the object's. */
  get(key: string, sha256: string): KeptArchive | undefined {
    const kept = this.#entries.get(key);
    return kept?.sha256 === sha256 ? kept : undefined;
  }

  /** Keeps an archive if it is small enough. */
  set(key: string, archive: KeptArchive): void {
    if (archive.bytes.byteLength > this.maxBytes) return;
    this.delete(key);
    while (this.#total + archive.bytes.byteLength > this.totalBytes) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.delete(oldest.value);
    }
    this.#entries.set(key, archive);
    this.#total += archive.bytes.byteLength;
  }

  delete(key: string): void {
    const kept = this.#entries.get(key);
    if (!kept) return;
    this.#entries.delete(key);
    this.#total -= kept.bytes.byteLength;
  }

  /** Bytes kept in all. */
  get size(): number {
    return this.#total;
  }
}

/** The isolate's kept archives. */
export const keptArchives = new KeptArchives();
