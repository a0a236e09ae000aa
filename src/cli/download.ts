/**
 * Polls a download link until the archive is there and saves it: into `FILE.part`, resumed with
 * `Range: bytes=<size>-` after a dropped connection, started again from zero on 416, and renamed
 * to FILE only once its SHA-256 equals `X-Export-SHA256` (docs/api.md, export rule 7, items 1 to 3).
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, renameSync, rmSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { CliError, ExitCode } from "./exit-codes";
import { fallbackFilename, filenameFromDisposition, parseContentRange, readSha256 } from "./headers";
import { type Effects, describeNetworkError, isFileSystemError, readReply } from "./http";
import { MAX_NETWORK_ATTEMPTS, decideDownload, networkBackoffSeconds } from "./poll";
import type { Reporter } from "./progress";

/** Where and what to download. */
export interface DownloadRequest {
  /** The link exactly as the start reply returned it. */
  url: string;
  databaseId: string;
  /** `--output`; without it the file is named by the server, in `directory`. */
  output?: string;
  directory: string;
}

/** A saved and verified archive. */
export interface SavedArchive {
  file: string;
  bytes: number;
  sha256: string;
}

const sizeOf = (path: string): number => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(path), hash);
  return hash.digest("hex");
}

/** Streams a 200/206 body into the part file, reporting progress; rejects if the connection drops. */
async function saveBody(res: Response, part: string, offset: number, total: number | undefined, reporter: Reporter): Promise<void> {
  const file = createWriteStream(part, { flags: offset > 0 ? "a" : "w" });
  if (res.body === null) {
    await new Promise<void>((done, fail) => file.end(() => done()).on("error", fail));
    return;
  }
  let saved = offset;
  reporter.progress(saved, total);
  // The caller reads the part file's size to resume from it, and appends after it: a write still
  // under way when the connection dropped must land first, so this returns only once the file is
  // closed, whichever way the body ended.
  const closed = new Promise<void>((done) => file.once("close", () => done()));
  try {
    await pipeline(
      Readable.fromWeb(res.body as WebReadableStream<Uint8Array>),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          saved += chunk.length;
          reporter.progress(saved, total);
          yield chunk;
        }
      },
      file,
    );
  } finally {
    if (!file.closed) file.destroy();
    await closed;
  }
}

type Io = Effects & { reporter: Reporter };

/** What a download keeps from one request to the next. */
interface Progress {
  /** The file the archive is saved as, once known (`--output`, or the name the server gives). */
  target: string | undefined;
  /** Bytes in the part file: where the next request resumes. */
  offset: number;
  /** The part file was left by an earlier run: it may belong to another export. */
  partFromEarlierRun: boolean;
  /** The X-Export-SHA256 of the replies so far. */
  expectedSha: string | undefined;
  /** Network failures in a row without progress. */
  failures: number;
}

/** Downloads and verifies the archive behind `request.url`; throws CliError on any final failure. */
export async function downloadArchive(request: DownloadRequest, io: Io): Promise<SavedArchive> {
  const target = request.output === undefined ? undefined : resolve(request.directory, request.output);
  const offset = target === undefined ? 0 : sizeOf(`${target}.part`);
  // A part file from an earlier run may belong to another export; it gets one fresh try on mismatch.
  const progress: Progress = { target, offset, partFromEarlierRun: offset > 0, expectedSha: undefined, failures: 0 };
  for (;;) {
    const saved = await tryDownload(request, io, progress);
    if (saved) return saved;
  }
}

/** One request for the archive: the saved archive, or null to ask again (having waited as the reply or a failure says). */
async function tryDownload(request: DownloadRequest, io: Io, progress: Progress): Promise<SavedArchive | null> {
  const headers: Record<string, string> = { "Accept-Encoding": "identity" };
  if (progress.offset > 0) headers.Range = `bytes=${progress.offset}-`;
  let res: Response;
  try {
    res = await io.fetch(request.url, { headers });
  } catch (error) {
    await networkFailure(io, progress, error);
    return null;
  }
  if (!(await replyHasArchive(res, io, progress))) return null;
  const target = progress.target ?? (await nameTarget(request, res, io.reporter, progress));
  if (target === null) return null;
  const length = await replyLength(res, io.reporter, progress);
  if (length === null) return null;
  if (!(await saveReply(res, io, progress, `${target}.part`, length.total))) return null;
  return verifiedArchive(io.reporter, progress, target);
}

/** Counts a network failure: waits its backoff, or gives up after MAX_NETWORK_ATTEMPTS in a row. */
async function networkFailure(io: Io, progress: Progress, error: unknown): Promise<void> {
  progress.failures++;
  if (progress.failures >= MAX_NETWORK_ATTEMPTS) {
    throw new CliError(ExitCode.NETWORK, `the download kept failing (${describeNetworkError(error)}), ${MAX_NETWORK_ATTEMPTS} tries in a row without progress`);
  }
  const seconds = networkBackoffSeconds(progress.failures);
  io.reporter.phase(`network error (${describeNetworkError(error)}), retrying in ${seconds} s`);
  await io.sleep(seconds * 1000);
}

/** Drops the part file: the next request asks for the whole archive. */
function startOver(reporter: Reporter, progress: Progress, why: string): void {
  reporter.phase(`${why}; starting again from the beginning`);
  if (progress.target !== undefined) rmSync(`${progress.target}.part`, { force: true });
  progress.offset = 0;
  progress.expectedSha = undefined;
  progress.partFromEarlierRun = false;
}

/** Whether the reply brings the archive; otherwise it is waited for, started over or given up, as the reply says. */
async function replyHasArchive(res: Response, io: Io, progress: Progress): Promise<boolean> {
  const { reply } = await readReply(res, io.now(), true);
  const decision = decideDownload(reply);
  if (decision.action === "stop") throw decision.error;
  if (decision.action === "wait") {
    io.reporter.phase(decision.message);
    await io.sleep(decision.seconds * 1000);
    return false;
  }
  if (decision.action === "restart-from-zero") {
    startOver(io.reporter, progress, "the part file is longer than the archive (416)");
    return false;
  }
  return true;
}

/**
 * Names the file as the server does (else after the link); null when a part file of that name is
 * there and the reply is the whole archive: the next request resumes the part file instead.
 */
async function nameTarget(request: DownloadRequest, res: Response, reporter: Reporter, progress: Progress): Promise<string | null> {
  const name = filenameFromDisposition(res.headers.get("content-disposition")) ?? fallbackFilename(request.url, request.databaseId);
  const target = resolve(request.directory, name);
  progress.target = target;
  const existing = sizeOf(`${target}.part`);
  if (existing > 0 && res.status === 200) {
    await res.body?.cancel();
    reporter.phase(`resuming ${name}.part from byte ${existing}`);
    progress.offset = existing;
    progress.partFromEarlierRun = true;
    return null;
  }
  return target;
}

/**
 * The archive's length as the reply states it, once its X-Export-SHA256 is there and a 206 is the
 * part asked for (null otherwise: the download starts over). A 200 rewrites the part file from zero.
 */
async function replyLength(res: Response, reporter: Reporter, progress: Progress): Promise<{ total: number | undefined } | null> {
  const sha = readSha256(res.headers.get("x-export-sha256"));
  if (sha === undefined) {
    await res.body?.cancel();
    throw new CliError(ExitCode.CHECKSUM, "the reply carries no valid X-Export-SHA256, so the archive cannot be verified");
  }
  let total: number | undefined;
  if (res.status === 206) {
    const range = parseContentRange(res.headers.get("content-range"));
    if (range?.start !== progress.offset || (progress.expectedSha !== undefined && sha !== progress.expectedSha)) {
      await res.body?.cancel();
      startOver(reporter, progress, "the server answered with another part of the archive");
      return null;
    }
    total = range.total;
  } else {
    progress.offset = 0;
    progress.partFromEarlierRun = false;
    const length = res.headers.get("content-length");
    total = length === null ? undefined : Number(length);
  }
  progress.expectedSha = sha;
  return { total };
}

/** Saves the reply's body into the part file; false when the connection dropped (the next request resumes). */
async function saveReply(res: Response, io: Io, progress: Progress, part: string, total: number | undefined): Promise<boolean> {
  const before = progress.offset;
  let dropped: unknown;
  try {
    await saveBody(res, part, progress.offset, total, io.reporter);
  } catch (error) {
    if (isFileSystemError(error)) throw error;
    dropped = error;
  }
  progress.offset = sizeOf(part);
  if (dropped === undefined && total !== undefined && progress.offset < total) {
    dropped = new Error(`connection closed at byte ${progress.offset} of ${total}`);
  }
  if (dropped === undefined) return true;
  if (progress.offset > before) {
    progress.failures = 0;
    io.reporter.phase(`connection lost at byte ${progress.offset} (${describeNetworkError(dropped)}); resuming`);
  } else {
    await networkFailure(io, progress, dropped);
  }
  return false;
}

/** Renames the part file to the target once its SHA-256 is the reply's; null when an earlier run's part file must start over. */
async function verifiedArchive(reporter: Reporter, progress: Progress, target: string): Promise<SavedArchive | null> {
  const part = `${target}.part`;
  const actual = await sha256OfFile(part);
  if (actual !== progress.expectedSha) {
    if (progress.partFromEarlierRun) {
      startOver(reporter, progress, "the part file left by an earlier run does not match this archive");
      return null;
    }
    rmSync(part, { force: true });
    throw new CliError(
      ExitCode.CHECKSUM,
      `checksum mismatch: X-Export-SHA256 is ${progress.expectedSha} but the saved bytes hash to ${actual}; the part file was deleted`,
    );
  }
  renameSync(part, target);
  reporter.finish();
  return { file: target, bytes: progress.offset, sha256: actual };
}
