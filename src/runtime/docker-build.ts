/**
 * Builds on the Docker Engine: which builder runs a build (BuildKit through `POST /build?version=2`,
 * or the classic builder), the query each is given (limits, the app's cache scope), and reading
 * either's progress stream to its end. The choices are pure functions; `followBuild` and
 * `supportsBuildKit` do the I/O.
 *
 * Build cache, per app and never across apps:
 * - BuildKit keeps one cache per engine. A RUN step's cache key includes the build's extra host
 *   names (their addresses are left out), so every build gets the host `<scope>.build-cache.invalid`
 *   where `scope` is a secret derived from the app: another app's identical RUN has another key and
 *   runs anew; `RUN --mount=type=cache` directories get the same scope as their namespace
 *   (BUILDKIT_CACHE_MOUNT_NS). Steps without a RUN before them (COPY, ADD of identical bytes onto
 *   the same base) stay content-addressed.
 * - The classic builder's cache is every image on the engine; with `cachefrom` it reuses a step only
 *   when the result is an ancestor of one of the listed images, so the list is the app's own images.
 * - A build without a scope (or a first classic build) reuses nothing (`nocache`).
 */
import { packTar } from "modern-tar";
import { BuildKitProgress } from "./buildkit-progress";
import type { DockerEngineClient } from "./docker-client";
import { BuildProgress, JsonLinesDecoder } from "./docker-stream";
import { type BuildSpec, RuntimeUnavailableError } from "./types";

/** `RUNTIME_BUILDER`: which builder the Docker adapter uses. */
export const BUILDERS = ["auto", "buildkit", "classic"] as const;
export type BuilderChoice = (typeof BUILDERS)[number];
export type Builder = "buildkit" | "classic";

/**
 * The builder for one build. BuildKit inside Docker Engine runs RUN steps without the build's
 * memory and CPU limits (the engine ignores `memory`, `cpuquota` and `cgroupparent` for
 * `version=2`), so `auto` takes BuildKit only for a build that asks for none; `buildkit` takes it
 * whenever the engine has it, limits or not; the classic builder is the fallback everywhere.
 */
export function chooseBuilder(choice: BuilderChoice, engineHasBuildKit: boolean, spec: Pick<BuildSpec, "limits">): Builder {
  if (!engineHasBuildKit || choice === "classic") return "classic";
  if (choice === "buildkit") return "buildkit";
  return spec.limits ? "classic" : "buildkit";
}

/** The CFS period the engine divides CPU time into; a quota of `cpus` periods is `cpus` CPUs. */
const CPU_PERIOD_US = 100_000;

/** /build's limits for the containers of RUN steps: memory without swap on top, and a CPU quota. */
export function buildLimits(limits: BuildSpec["limits"]): Record<string, string> {
  if (!limits) return {};
  return {
    memory: String(limits.memoryBytes),
    memswap: String(limits.memoryBytes),
    cpuperiod: String(CPU_PERIOD_US),
    cpuquota: String(Math.round(limits.cpus * CPU_PERIOD_US)),
  };
}

/** TEST-NET-1: the scope host resolves somewhere harmless should a step look it up. */
const SCOPE_HOST_ADDRESS = "192.0.2.1";
/** A cache scope is a DNS label: it becomes a host name. */
export const CACHE_SCOPE = /^[a-z0-9]{16,63}$/;

/**
 * The `/build` query for one build. `ownImages`: the app's earlier images on the engine (the
 * classic builder's cache sources); ignored by BuildKit.
 */
export function buildQuery(builder: Builder, spec: Pick<BuildSpec, "tag" | "dockerfile" | "limits" | "cacheScope">, ownImages: string[]): Record<string, string> {
  // pull: every base image (FROM, COPY --from an image) comes from its registry, never from the
  // engine's store of other tenants' images and pulls (docs/security.md, "Builds and source fetches").
  const query: Record<string, string> = { t: spec.tag, dockerfile: spec.dockerfile, rm: "1", forcerm: "1", pull: "1", ...buildLimits(spec.limits) };
  const scope = spec.cacheScope !== undefined && CACHE_SCOPE.test(spec.cacheScope) ? spec.cacheScope : undefined;
  if (builder === "buildkit") {
    query.version = "2";
    if (!scope) return { ...query, nocache: "1" };
    return { ...query, extrahosts: `${scope}.build-cache.invalid:${SCOPE_HOST_ADDRESS}`, buildargs: JSON.stringify({ BUILDKIT_CACHE_MOUNT_NS: scope }) };
  }
  const sources = ownImages.filter((image) => image !== spec.tag);
  if (!scope || sources.length === 0) return { ...query, nocache: "1" };
  return { ...query, cachefrom: JSON.stringify(sources) };
}

/** The repository part of an image reference (`registry:5000/app:tag` -> `registry:5000/app`). */
export function repositoryOf(tag: string): string {
  const slash = tag.lastIndexOf("/");
  const colon = tag.lastIndexOf(":");
  return colon > slash ? tag.slice(0, colon) : tag;
}

/** What both builders' progress readers give. */
export interface BuildStream {
  feed(message: unknown): { text?: string; error?: string };
  finish(): string | undefined;
  readonly lastStep: string | undefined;
  readonly imageId: string | undefined;
  readonly error: string | undefined;
}

export function progressFor(builder: Builder): BuildStream {
  return builder === "buildkit" ? new BuildKitProgress() : new BuildProgress();
}

/** Reads a build's JSON-lines progress to its end, passing whole lines of output on. */
export async function followBuild(res: Response, progress: BuildStream, onOutput: BuildSpec["onOutput"]): Promise<BuildStream> {
  const lines = new JsonLinesDecoder();
  const text = new TextDecoder();
  const emit = async (out: string | undefined) => {
    if (out && onOutput) await onOutput(out);
  };
  const reader = res.body?.getReader();
  if (!reader) throw new RuntimeUnavailableError("The container engine answered the build without a body.");
  try {
    for (;;) {
      const chunk = await reader.read().catch(() => {
        throw new RuntimeUnavailableError("The container engine's build stream broke off.");
      });
      const messages = chunk.done ? [...lines.push(text.decode()), ...lines.flush()] : lines.push(text.decode(chunk.value, { stream: true }));
      for (const message of messages) await emit(progress.feed(message).text);
      if (chunk.done) break;
    }
  } catch (error) {
    // Stop the engine's stream too, whatever broke (including the caller's onOutput).
    await reader.cancel().catch(() => undefined);
    throw error;
  }
  await emit(progress.finish());
  return progress;
}

/** A build file no frontend accepts: the probe fails at once and leaves nothing on the engine. */
const PROBE_DOCKERFILE = "cp-buildkit-probe\n";

/**
 * Whether the engine runs `version=2` builds. BuildKit answers a context it cannot parse with its
 * trace messages and the dockerfile frontend's error; an engine without it refuses the version
 * (400 `invalid version`, or `buildkit not supported by daemon`) or answers as the classic builder.
 * A tar context needs no BuildKit session on an engine with the graph-driver image store.
 */
export async function supportsBuildKit(client: DockerEngineClient): Promise<boolean> {
  const context = await packTar([{ header: { name: "Dockerfile", size: PROBE_DOCKERFILE.length, type: "file" }, body: PROBE_DOCKERFILE }]);
  const res = await client.request("POST", "/build", {
    query: { version: "2", dockerfile: "Dockerfile", rm: "1", forcerm: "1", nocache: "1" },
    stream: new Blob([context]).stream(),
    contentType: "application/x-tar",
    accept: [400, 500],
  });
  const body = await res.text();
  return res.ok && (body.includes("moby.buildkit.trace") || body.includes("dockerfile.v0"));
}
