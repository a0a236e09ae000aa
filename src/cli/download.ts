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

/** Downloads and verifies the archive behind `request.url`; throws CliError on any final failure. */
export async function downloadArchive(request: DownloadRequest, io: Effects & { reporter: Reporter }): Promise<SavedArchive> {
  const { reporter } = io;
  let target = request.output === undefined ? undefined : resolve(request.directory, request.output);
  let offset = target === undefined ? 0 : sizeOf(`${target}.part`);
  // A part file from an earlier run may belong to another export; it gets one fresh try on mismatch.
  let partFromEarlierRun = offset > 0;
  let expectedSha: string | undefined;
  let failures = 0;

  const networkFailure = async (error: unknown): Promise<void> => {
    failures++;
    if (failures >= MAX_NETWORK_ATTEMPTS) {
      throw new CliError(ExitCode.NETWORK, `the download kept failing (${describeNetworkError(error)}), ${MAX_NETWORK_ATTEMPTS} tries in a row without progress`);
    }
    const seconds = networkBackoffSeconds(failures);
    reporter.phase(`network error (${describeNetworkError(error)}), retrying in ${seconds} s`);
    await io.sleep(seconds * 1000);
  };
  const startOver = (why: string): void => {
    reporter.phase(`${why}; starting again from the beginning`);
    if (target !== undefined) rmSync(`${target}.part`, { force: true });
    offset = 0;
    expectedSha = undefined;
    partFromEarlierRun = false;
  };

  for (;;) {
    const headers: Record<string, string> = { "Accept-Encoding": "identity" };
    if (offset > 0) headers.Range = `bytes=${offset}-`;
    let res: Response;
    try {
      res = await io.fetch(request.url, { headers });
    } catch (error) {
      await networkFailure(error);
      continue;
    }
    const { reply } = await readReply(res, io.now(), true);
    const decision = decideDownload(reply);
    if (decision.action === "stop") throw decision.error;
    if (decision.action === "wait") {
      reporter.phase(decision.message);
      await io.sleep(decision.seconds * 1000);
      continue;
    }
    if (decision.action === "restart-from-zero") {
      startOver("the part file is longer than the archive (416)");
      continue;
    }

    if (target === undefined) {
      const name = filenameFromDisposition(res.headers.get("content-disposition")) ?? fallbackFilename(request.url, request.databaseId);
      target = resolve(request.directory, name);
      const existing = sizeOf(`${target}.part`);
      if (existing > 0 && res.status === 200) {
        await res.body?.cancel();
        reporter.phase(`resuming ${name}.part from byte ${existing}`);
        offset = existing;
        partFromEarlierRun = true;
        continue;
      }
    }
    const part = `${target}.part`;
    const sha = readSha256(res.headers.get("x-export-sha256"));
    if (sha === undefined) {
      await res.body?.cancel();
      throw new CliError(ExitCode.CHECKSUM, "the reply carries no valid X-Export-SHA256, so the archive cannot be verified");
    }
    let total: number | undefined;
    if (res.status === 206) {
      const range = parseContentRange(res.headers.get("content-range"));
      if (range?.start !== offset || (expectedSha !== undefined && sha !== expectedSha)) {
        await res.body?.cancel();
        startOver("the server answered with another part of the archive");
        continue;
      }
      total = range.total;
    } else {
      offset = 0;
      partFromEarlierRun = false;
      const length = res.headers.get("content-length");
      total = length === null ? undefined : Number(length);
    }
    expectedSha = sha;

    const before = offset;
    let dropped: unknown;
    try {
      await saveBody(res, part, offset, total, reporter);
    } catch (error) {
      if (isFileSystemError(error)) throw error;
      dropped = error;
    }
    offset = sizeOf(part);
    if (dropped === undefined && total !== undefined && offset < total) {
      dropped = new Error(`connection closed at byte ${offset} of ${total}`);
    }
    if (dropped !== undefined) {
      if (offset > before) {
        failures = 0;
        reporter.phase(`connection lost at byte ${offset} (${describeNetworkError(dropped)}); resuming`);
      } else {
        await networkFailure(dropped);
      }
      continue;
    }

    const actual = await sha256OfFile(part);
    if (actual !== expectedSha) {
      if (partFromEarlierRun) {
        startOver("the part file left by an earlier run does not match this archive");
        continue;
      }
      rmSync(part, { force: true });
      throw new CliError(
        ExitCode.CHECKSUM,
        `checksum mismatch: X-Export-SHA256 is ${expectedSha} but the saved bytes hash to ${actual}; the part file was deleted`,
      );
    }
    renameSync(part, target);
    reporter.finish();
    return { file: target, bytes: offset, sha256: actual };
  }
}
