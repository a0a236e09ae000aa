/**
 * The fetch-and-build step of a deploy: the branch's archive is fetched under the address rule,
 * streamed through the tar reader under the source caps and deadline, and built on the engine
 * under the build limits and deadline. A deploy is built once: the first try claims the build
 * mark; a queue retry reuses the deploy's image (one tag per deploy) or waits for the build that
 * holds the mark, and never starts a second one. Every refusal leaves nothing on the engine.
 */
import type { ContainerRuntime, InstanceLimits } from "../runtime/types";
import type { SourcePolicy } from "./address";
import { type ArchiveInspection, BuildFileRefusedError, SourceLimitError, buildContextFromArchive } from "./context";
import { fetchSourceArchive } from "./fetch";
import { type SourceCaps, buildTimeoutMessage, sourceTimeoutMessage } from "./limits";

/** How long the tar reader may take to report on the build file after the engine has read the context. */
const INSPECTION_GRACE_MS = 10_000;
/** A running build refreshes its mark this often... */
export const BUILD_MARK_REFRESH_MS = 15_000;
/** ...so a mark older than this belongs to a build whose try has ended. */
export const BUILD_MARK_STALE_MS = 60_000;
const BUILD_WAIT_POLL_MS = 2_000;

export const BUILD_INTERRUPTED = "The build was interrupted before it finished, and a deploy is never built twice. Deploy again.";

/**
 * What a try does that found the build mark taken by an earlier try: use the image once it is
 * there; go on waiting while the mark is fresh (the build still runs) and the wait has not passed
 * the build deadline; otherwise fail the deploy, never starting a second build.
 */
export function waitingTry(state: { imageExists: boolean; markAt: number | null; now: number; waitUntil: number }): "reuse" | "wait" | "fail" {
  if (state.imageExists) return "reuse";
  if (state.markAt === null || state.now - state.markAt > BUILD_MARK_STALE_MS || state.now > state.waitUntil) return "fail";
  return "wait";
}

export interface BuildMark {
  /** True when this try may build (the mark was not set); sets it. */
  claim(): Promise<boolean>;
  refresh(): Promise<void>;
  /** When the build last showed signs of life. */
  aliveAt(): Promise<number | null>;
}

export interface BuildStepInput {
  runtime: ContainerRuntime;
  repository: string;
  branch: string;
  rootDirectory: string;
  /** The build file, repository-relative and inside the context. */
  buildFile: { path: string; inContext: string };
  /** One image tag per deploy: what a retry looks for. */
  tag: string;
  policy: SourcePolicy;
  /** A private repository's access token (opened by the deploy job); never logged. */
  token?: string | null;
  caps: SourceCaps;
  sourceTimeoutSeconds: number;
  buildTimeoutSeconds: number;
  buildLimits: InstanceLimits;
  /** BUILD_DISK_MB in bytes: how large the image may grow while it is built (base image included). */
  buildDiskBytes?: number;
  /** The app's build cache scope (cache-scope.ts): its earlier builds' steps are reused, no one else's. */
  cacheScope?: string;
  /**
   * The build-source rule (src/apps/contract/build-sources.ts): a refusing sentence for the build
   * file's text, or null. The engine gets a whole context only for a build file that passed.
   */
  checkBuildFile?: (text: string) => string | null;
  mark: BuildMark;
  now: () => number;
  fetch?: typeof fetch;
  step: (text: string) => Promise<void>;
  append: (text: string) => Promise<void>;
}

export type BuildStepOutcome =
  | { ok: true; image: string; dockerfile: string | null; commitSha?: string | null }
  | { ok: false; kind: "source_unavailable" | "build_file_missing" | "build_failed"; message: string; buildFiles?: string[] };

/** Fetches, checks and builds a deploy's source, once per deploy whatever the number of tries. */
export async function fetchAndBuild(input: BuildStepInput): Promise<BuildStepOutcome> {
  const { runtime, tag } = input;
  if (await runtime.hasImage(tag)) return reuse(input, "An earlier try of this deploy built its image; using it");
  if (!(await input.mark.claim())) {
    await input.step("An earlier try of this deploy started its build; waiting for it rather than building twice");
    const waitUntil = input.now() + input.buildTimeoutSeconds * 1000 + BUILD_MARK_STALE_MS;
    for (;;) {
      const next = waitingTry({ imageExists: await runtime.hasImage(tag), markAt: await input.mark.aliveAt(), now: input.now(), waitUntil });
      if (next === "reuse") return reuse(input, "The earlier try's build finished; using its image");
      if (next === "fail") return { ok: false, kind: "build_failed", message: BUILD_INTERRUPTED };
      await sleep(BUILD_WAIT_POLL_MS);
    }
  }
  const heartbeat = setInterval(() => void input.mark.refresh().catch(() => undefined), BUILD_MARK_REFRESH_MS);
  try {
    const outcome = await build(input);
    // A refused or failed build leaves no image (the engine keeps nothing of a cancelled one).
    if (!outcome.ok) await runtime.removeImage(tag).catch(() => undefined);
    return outcome;
  } finally {
    clearInterval(heartbeat);
  }
}

async function build(input: BuildStepInput): Promise<BuildStepOutcome> {
  const source = await openSource(input);
  if (!source.ok) return source;
  const { context, inspection, done } = source;
  await input.step(`Building ${input.buildFile.path} (context: ${input.rootDirectory || "repository root"})`);
  let built: Awaited<ReturnType<ContainerRuntime["build"]>>;
  const upload = new AbortController();
  try {
    built = await input.runtime.build({
      context: guardedUpload(context, upload),
      signal: upload.signal,
      dockerfile: input.buildFile.inContext,
      tag: input.tag,
      limits: input.buildLimits,
      ...(input.buildDiskBytes ? { diskBytes: input.buildDiskBytes } : {}),
      ...(input.cacheScope ? { cacheScope: input.cacheScope } : {}),
      timeoutSeconds: input.buildTimeoutSeconds,
      onOutput: (text) => input.append(text.replace(/\n$/, "")),
    });
  } catch (err) {
    // A context that broke off (a cap, the deadline, a damaged archive) ends the upload: that is
    // the source's failure, not the engine's.
    const found = await settled(inspection, 1000);
    done();
    if (found instanceof Error) return sourceFailure(found);
    // With a build-file rule, a missing build file ends the upload before the engine builds anything.
    if (found && found.dockerfile === null) return { ok: false, kind: "build_file_missing", message: "", buildFiles: found.buildFiles };
    throw err;
  }
  const found = await settled(inspection, INSPECTION_GRACE_MS);
  done();
  if (found instanceof Error) return sourceFailure(found);
  if (found && found.dockerfile === null) return { ok: false, kind: "build_file_missing", message: "", buildFiles: found.buildFiles };
  if (!built.ok) {
    if (built.timedOut) {
      await input.step(`Build cancelled on the engine after ${input.buildTimeoutSeconds} s`);
      return { ok: false, kind: "build_failed", message: buildTimeoutMessage(input.buildTimeoutSeconds) };
    }
    if (built.diskExceeded) {
      await input.step("Build cancelled on the engine: its image went past the build disk limit");
      return { ok: false, kind: "build_failed", message: built.error };
    }
    const step = built.failedStep ? ` at ${built.failedStep}` : "";
    return { ok: false, kind: "build_failed", message: `The build failed${step}: ${built.error}` };
  }
  return { ok: true, image: built.image, dockerfile: found?.dockerfile ?? null, commitSha: found?.commitSha ?? null };
}

/** A context that broke off: a refused build file fails the build, anything else the source. */
function sourceFailure(error: Error): BuildStepOutcome {
  return { ok: false, kind: error instanceof BuildFileRefusedError ? "build_failed" : "source_unavailable", message: error.message };
}

type OpenSource =
  | { ok: true; context: ReadableStream<Uint8Array>; inspection: Promise<ArchiveInspection>; done: () => void }
  | { ok: false; kind: "source_unavailable"; message: string };

/** The archive as a build context, under the source deadline (fetch and unpacking together). */
async function openSource(input: BuildStepInput): Promise<OpenSource> {
  // Two signals: the reader's carries the sentence it fails with; the requests' carries none.
  const deadline = new AbortController();
  const requests = new AbortController();
  const timer = setTimeout(() => {
    deadline.abort(new SourceLimitError(sourceTimeoutMessage(input.repository, input.sourceTimeoutSeconds)));
    requests.abort();
  }, input.sourceTimeoutSeconds * 1000);
  const done = () => {
    clearTimeout(timer);
    if (!deadline.signal.aborted) deadline.abort(new Error("The source is no longer read."));
  };
  await input.step(`Fetching branch ${input.branch} of ${input.repository}`);
  let fetched: Awaited<ReturnType<typeof fetchSourceArchive>>;
  try {
    fetched = await fetchSourceArchive(input.repository, input.branch, { policy: input.policy, fetch: input.fetch, signal: requests.signal, token: input.token });
  } catch (err) {
    done();
    if (deadline.signal.reason instanceof SourceLimitError) return { ok: false, kind: "source_unavailable", message: deadline.signal.reason.message };
    throw err;
  }
  if (!fetched.ok) {
    done();
    return { ok: false, kind: "source_unavailable", message: fetched.message };
  }
  const { context, inspection } = buildContextFromArchive(fetched.body, {
    rootDirectory: input.rootDirectory,
    dockerfilePath: input.buildFile.path,
    caps: input.caps,
    signal: deadline.signal,
    ...(input.checkBuildFile ? { checkBuildFile: input.checkBuildFile } : {}),
  });
  // Once the archive has passed through, the deadline no longer applies.
  inspection.then(() => clearTimeout(timer), () => clearTimeout(timer));
  return { ok: true, context, inspection, done };
}

/**
 * A tar header block no reader accepts (its checksum field is not a number). A context can break
 * off between two entries, where an archive without its end marker still reads as whole
 * (Docker 20.10 builds one); sent first, this block makes the engine refuse the context even if
 * the upload's end reached it as a clean one.
 */
const DAMAGED_BLOCK = new Uint8Array(512).fill(0xff);
const DAMAGED_BLOCK_GRACE_MS = 1000;

/**
 * The context as the engine upload reads it. When the context breaks off (a cap, the deadline, a
 * damaged archive, a refused build file), a damaged block is sent and the upload aborted rather
 * than ended: the engine never sees a complete context, and the build call rejects at once.
 */
function guardedUpload(context: ReadableStream<Uint8Array>, upload: AbortController): ReadableStream<Uint8Array> {
  const reader = context.getReader();
  let broken = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // The damaged block has been taken: now the upload ends.
        if (broken) return upload.abort();
        try {
          const next = await reader.read();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        } catch {
          // The reason stays with the context (the inspection reports it); the abort itself carries none.
          broken = true;
          controller.enqueue(DAMAGED_BLOCK.slice());
          // Should the upload not ask for more, it still ends.
          setTimeout(() => upload.abort(), DAMAGED_BLOCK_GRACE_MS);
        }
      },
      // An errored context rejects the cancel with its error, already reported by the inspection.
      cancel: (reason) => reader.cancel(reason).catch(() => undefined),
    },
    { highWaterMark: 0 },
  );
}

/** A reused image still needs its build file's text (the probed port): the archive is read again, not built. */
async function reuse(input: BuildStepInput, note: string): Promise<BuildStepOutcome> {
  await input.step(note);
  const source = await openSource(input);
  if (!source.ok) return { ok: true, image: input.tag, dockerfile: null };
  const drained = source.context.pipeTo(new WritableStream()).catch(() => undefined);
  const found = await settled(source.inspection, INSPECTION_GRACE_MS * 3);
  await drained;
  source.done();
  const inspected = found instanceof Error || found === null ? null : found;
  return { ok: true, image: input.tag, dockerfile: inspected?.dockerfile ?? null, commitSha: inspected?.commitSha ?? null };
}

/** The inspection's result, its error, or null when it has not settled within `ms`. */
async function settled(inspection: Promise<ArchiveInspection>, ms: number): Promise<ArchiveInspection | Error | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const result = await Promise.race([
    inspection.catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))),
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), ms);
    }),
  ]);
  clearTimeout(timer);
  return result;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
