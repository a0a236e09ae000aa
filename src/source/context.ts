/**
 * Turns a forge's branch archive (gzip tar, everything under one `<repo>-<ref>/` folder) into the
 * build context the engine's /build takes: an uncompressed tar of the root directory only, paths
 * relative to it. One pass, streaming in and out with backpressure, so an archive of any size
 * passes through in bounded memory; on the way it notes the build file's text and every build
 * file in the repository, for the failed-deploy message (docs/apps.md, failed-deploy messages) and the probed port.
 */
import { createTarDecoder, createTarPacker, type ParsedTarEntry, type TarHeader, type TarPackController } from "modern-tar";
import { isBuildFileName, normalizeRepoPath } from "./build-file";
import { commitFromArchive } from "./commit";
import { type SourceCaps, type SourceTally, sourceCapRefusal } from "./limits";

/** A build file larger than this is not a Dockerfile anyone wrote; its text is not kept in memory. */
export const DEFAULT_MAX_BUILD_FILE_BYTES = 1024 * 1024;

export interface ContextOptions {
  /** Root directory, repository-relative and normalised (`''` for the repository root). */
  rootDirectory: string;
  /** The build file's repository-relative path (`resolveBuildFile(...).path`). */
  dockerfilePath: string;
  maxBuildFileBytes?: number;
  /** SOURCE_MAX_BYTES and SOURCE_MAX_ENTRIES; none when absent. */
  caps?: SourceCaps;
  /** Ends the reading; an Error reason (the source deadline's sentence) is what the reader fails with. */
  signal?: AbortSignal;
  /**
   * The build file's rule (build-sources.ts): a sentence refusing its text, or null. Given, the
   * context is ended only once the build file was found as a plain file and passed; otherwise it
   * breaks off before its end, so the engine never builds it.
   */
  checkBuildFile?: (text: string) => string | null;
}

export interface ArchiveInspection {
  /** The build file's text, or null when the archive has no file at `dockerfilePath`. */
  dockerfile: string | null;
  /** Every build file in the repository (`isBuildFileName`), repository-relative, sorted. */
  buildFiles: string[];
  /**
   * The commit the archive names, or null: git archive's pax `comment` record (every forge's
   * archive is made by it), else a top folder named `<repo>-<sha>` (GitHub, GitLab).
   */
  commitSha: string | null;
}

/** An archive refused by a source cap or deadline: `message` is the red panel's whole sentence. */
export class SourceLimitError extends Error {
  override readonly name = "SourceLimitError";
}

/** A build file the build-source rule refused: `message` is the red panel's whole sentence. */
export class BuildFileRefusedError extends Error {
  override readonly name = "BuildFileRefusedError";
}

/** The context broke off because the build file is missing (or is a link): the inspection says which files there are. */
class BuildFileMissing extends Error {}

/** Why an archive could not be turned into a context; `reason` is the clause after "could not be read:". */
export class ArchiveError extends Error {
  override readonly name = "ArchiveError";
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`The repository archive could not be read: ${reason}.`, options);
  }
}

/**
 * Starts streaming `archive` into a build context. `context` is to be read by the engine upload;
 * `inspection` settles once the whole archive has passed through, so it waits on that reader.
 * A damaged archive errors `context` and rejects `inspection` with the same ArchiveError.
 */
export function buildContextFromArchive(
  archive: ReadableStream<Uint8Array>,
  options: ContextOptions,
): { context: ReadableStream<Uint8Array>; inspection: Promise<ArchiveInspection> } {
  const root = normalizeRepoPath(options.rootDirectory, "Root directory");
  if (!root.ok) throw new Error(root.message);
  const { readable, controller } = createTarPacker();
  const tally: SourceTally = { bytes: 0, entries: 0 };
  const inspection = copyEntries(gunzip(archive, tally, options), controller, { ...options, rootDirectory: root.path }, tally).then(
    (found) => {
      const refusal = buildFileRefusal(found, options);
      if (refusal) {
        controller.error(refusal);
        if (refusal instanceof BuildFileMissing) return found;
        throw refusal;
      }
      try {
        controller.finalize();
      } catch {
        // The reader cancelled the context after the last entry; what was inspected still stands.
      }
      return found;
    },
    (err: unknown) => {
      const stopped = options.signal?.aborted && options.signal.reason instanceof Error ? options.signal.reason : null;
      const error = err instanceof ArchiveError || err instanceof SourceLimitError ? err : stopped ?? new ArchiveError(`its tar data is damaged (${messageOf(err)})`, { cause: err });
      controller.error(error);
      throw error;
    },
  );
  // A caller that learns of the failure from `context` need not also await `inspection`.
  inspection.catch(() => undefined);
  return { context: readable, inspection };
}

async function copyEntries(tar: ReadableStream<Uint8Array>, packer: TarPackController, options: ContextOptions, tally: SourceTally): Promise<ArchiveInspection> {
  const maxBuildFileBytes = options.maxBuildFileBytes ?? DEFAULT_MAX_BUILD_FILE_BYTES;
  const entries = tar.pipeThrough(createTarDecoder({ strict: true })).getReader();
  const buildFiles: string[] = [];
  let dockerfile: string | null = null;
  let top: string | null = null;
  let paxComment: string | null = null;
  // A link (or file) where a folder of the build file's path should be: the engine would read another file.
  let behindLink = false;
  try {
    for (let next = await entries.read(); !next.done; next = await entries.read()) {
      const entry = next.value;
      tally.entries++;
      checkCaps(tally, options.caps);
      const type = entry.header.type ?? "file";
      paxComment ??= entry.header.pax?.comment ?? null;
      const path = repositoryPath(entry.header.name, (top ??= topFolder(entry.header.name)), type);
      if (path !== "" && (type === "file" || type === "symlink") && isBuildFileName(path.slice(path.lastIndexOf("/") + 1))) {
        buildFiles.push(path);
      }
      const inContext = contextPath(path, options.rootDirectory);
      const linkname = type === "link" ? contextPath(repositoryPath(entry.header.linkname ?? "", top, "file"), options.rootDirectory) : undefined;
      if (inContext === null || inContext === "" || linkname === null || !["file", "directory", "symlink", "link"].includes(type)) {
        await entry.body.cancel();
        continue;
      }
      const capture = path === options.dockerfilePath && type === "file";
      // A later entry at the build file's path replaces it when unpacked: only a plain file counts.
      if (path === options.dockerfilePath && !capture) dockerfile = null;
      if (options.dockerfilePath.startsWith(`${path}/`) && type !== "directory") behindLink = true;
      if (capture && entry.header.size > maxBuildFileBytes) {
        throw new ArchiveError(`the build file "${path}" is larger than ${maxBuildFileBytes} bytes`);
      }
      const header: TarHeader = {
        ...copiedFields(entry.header),
        name: type === "directory" ? `${inContext}/` : inContext,
        size: type === "file" ? entry.header.size : 0,
        linkname: linkname ?? entry.header.linkname,
      };
      const text = await copyBody(entry, addEntry(packer, header), capture);
      if (capture) dockerfile = text;
    }
  } catch (err) {
    await entries.cancel(err).catch(() => undefined);
    throw err;
  }
  return { dockerfile: behindLink ? null : dockerfile, buildFiles: buildFiles.sort(), commitSha: commitFromArchive(paxComment, top) };
}

/** With a build-file rule: why the context may not be ended (no plain build file, or a refused one), else null. */
function buildFileRefusal(found: ArchiveInspection, options: ContextOptions): Error | null {
  if (!options.checkBuildFile) return null;
  if (found.dockerfile === null) return new BuildFileMissing("The build file is not a plain file in the context.");
  const refusal = options.checkBuildFile(found.dockerfile);
  return refusal === null ? null : new BuildFileRefusedError(refusal);
}

function checkCaps(tally: SourceTally, caps: SourceCaps | undefined): void {
  const refusal = caps ? sourceCapRefusal(tally, caps) : null;
  if (refusal) throw new SourceLimitError(refusal);
}

/** The header fields carried over: not `pax`, whose `path` would bring back the archive's name. */
function copiedFields(header: TarHeader): TarHeader {
  const { type, mode, mtime, uid, gid, uname, gname } = header;
  return { name: header.name, size: header.size, type, mode, mtime, uid, gid, uname, gname };
}

/** Writes an entry's body to the packer; returns its text when `capture` is set. */
async function copyBody(entry: ParsedTarEntry, sink: WritableStream<Uint8Array>, capture: boolean): Promise<string | null> {
  const writer = sink.getWriter();
  const decoder = capture ? new TextDecoder() : null;
  let text = "";
  const reader = entry.body.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    if (decoder) text += decoder.decode(chunk.value, { stream: true });
    await writer.write(chunk.value).catch(readerGone);
  }
  await writer.close().catch(readerGone);
  return decoder ? text + decoder.decode() : null;
}

function addEntry(packer: TarPackController, header: TarHeader): WritableStream<Uint8Array> {
  try {
    return packer.add(header);
  } catch (err) {
    return readerGone(err);
  }
}

/** The packer refuses writes once the context's reader has cancelled it. */
function readerGone(err: unknown): never {
  throw new ArchiveError(`the build context stopped being read (${messageOf(err)})`, { cause: err });
}

function topFolder(name: string): string {
  return name.replace(/^\.\//, "").split("/")[0] ?? "";
}

/** An entry's repository-relative path (`''` for the top folder itself), the top folder removed. */
function repositoryPath(name: string, top: string, type: string): string {
  const clean = name.replace(/^\.\//, "").replace(/\/+$/, "");
  if (clean === top && type === "directory") return "";
  if (!clean.startsWith(`${top}/`)) {
    throw new ArchiveError(`its entries are not all inside one top folder ("${top}/" and "${name}"), as a forge archive's are`);
  }
  const path = clean.slice(top.length + 1);
  if (path.split("/").some((segment) => segment === ".." || segment === "")) {
    throw new ArchiveError(`it holds a path that leaves its folder ("${name}")`);
  }
  return path;
}

/** A repository path relative to the root directory, or null when it lies outside it. */
function contextPath(path: string, root: string): string | null {
  if (root === "") return path;
  if (path === root) return "";
  return path.startsWith(`${root}/`) ? path.slice(root.length + 1) : null;
}

/**
 * The archive decompressed. Checks the gzip signature first, since a forge that answers with an
 * HTML page says more by that than by a failed inflate, and names errors of this stage.
 */
function gunzip(archive: ReadableStream<Uint8Array>, tally: SourceTally, options: ContextOptions): ReadableStream<Uint8Array> {
  let head: Uint8Array = new Uint8Array(0);
  // DecompressionStream replaces an error coming from upstream with its own, so keep ours here.
  let refused: Error | null = null;
  const refuse = (error: Error) => {
    refused = error;
    throw error;
  };
  const signature = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (head.length < 2) {
        head = concat(head, chunk.subarray(0, 2 - head.length));
        if (head.length === 2 && !(head[0] === 0x1f && head[1] === 0x8b)) refuse(notGzip(head));
      }
      controller.enqueue(chunk);
    },
    flush() {
      if (head.length === 0) refuse(new ArchiveError("it is empty"));
      if (head.length < 2) refuse(notGzip(head));
    },
  });
  // The DOM typings (used by the Node tests) want ArrayBuffer-backed chunks; any Uint8Array works.
  const inflate = new DecompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>;
  const inflated = archive.pipeThrough(signature).pipeThrough(inflate).getReader();
  // The deadline stops a forge that sends slowly or not at all, as well as a slow reader.
  const stopped = () => (options.signal?.aborted && options.signal.reason instanceof Error ? options.signal.reason : null);
  options.signal?.addEventListener("abort", () => void inflated.cancel(stopped()).catch(() => undefined), { once: true });
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await inflated.read();
          if (stopped()) throw stopped();
          if (next.done) return controller.close();
          // Counted as it is inflated: a gzip bomb is stopped at the cap, not once it is on disk.
          tally.bytes += next.value.byteLength;
          checkCaps(tally, options.caps);
          controller.enqueue(next.value);
        } catch (err) {
          const error = err instanceof SourceLimitError ? err : (stopped() ?? refused ?? new ArchiveError(`its gzip data is damaged (${messageOf(err)})`, { cause: err }));
          controller.error(error);
          await inflated.cancel(error).catch(() => undefined);
        }
      },
      cancel: (reason) => inflated.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

function notGzip(head: Uint8Array): ArchiveError {
  const hex = [...head].map((byte) => byte.toString(16).padStart(2, "0")).join(" ");
  return new ArchiveError(`it is not gzip data (it starts with bytes ${hex})`);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
