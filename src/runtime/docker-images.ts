/**
 * `ImageBuilder` on one Docker Engine: builds (BuildKit or the classic builder, docker-build.ts)
 * within the build's time and disk limits, and the engine's images by name. The Docker adapter
 * (docker.ts) and the Swarm adapter (which builds on its manager, then pushes) both use it.
 */
import { followBuildWithinDisk } from "./build-disk";
import { type Builder, type BuilderChoice, buildQuery, chooseBuilder, progressFor, repositoryOf, supportsBuildKit } from "./docker-build";
import { type DockerEngineClient, engineMessage } from "./docker-client";
import { listImages } from "./listing";
import { BUILD_NETWORK } from "./tenant-network";
import { type BuildOutcome, type BuildSpec, type ImageBuilder, type ListedObject, RuntimeUnavailableError } from "./types";

/** Per engine URL: whether it runs BuildKit builds (asked at the first build that could use it). */
const BUILDKIT_SUPPORT = new Map<string, Promise<boolean>>();

export class DockerImages implements ImageBuilder {
  constructor(
    private readonly client: DockerEngineClient,
    private readonly engineUrl: string,
    private readonly builderChoice: BuilderChoice,
    /** Creates the build network unless it exists (the classic builder runs its steps there). */
    private readonly ensureBuildNetwork: () => Promise<void>,
  ) {}

  async build(spec: BuildSpec): Promise<BuildOutcome> {
    const deadline = new AbortController();
    const timeoutSeconds = spec.timeoutSeconds;
    const timer = timeoutSeconds === undefined ? null : setTimeout(() => deadline.abort(new BuildTimeout(timeoutSeconds)), timeoutSeconds * 1000);
    try {
      return await this.runBuild(spec, spec.signal ? AbortSignal.any([deadline.signal, spec.signal]) : deadline.signal);
    } catch (error) {
      // Ending the call is what cancels the build: the engine stops the running step and
      // removes its container (forcerm) when the client goes away.
      if (deadline.signal.aborted) return { ok: false, error: (deadline.signal.reason as BuildTimeout).message, timedOut: true };
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw error;
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async runBuild(spec: BuildSpec, signal: AbortSignal): Promise<BuildOutcome> {
    const builder = await this.builderFor(spec);
    const ownImages = builder === "classic" && spec.cacheScope ? await this.images(repositoryOf(spec.tag)) : [];
    // The classic builder runs each step on the build network, under the same egress rules as apps.
    if (builder === "classic") await this.ensureBuildNetwork();
    const res = await this.client.request("POST", "/build", {
      query: { ...buildQuery(builder, spec, ownImages), ...(builder === "classic" ? { networkmode: BUILD_NETWORK } : {}) },
      stream: spec.context,
      contentType: "application/x-tar",
      // Docker answers 400 (Dockerfile parse error) and 500 (`Cannot locate specified
      // Dockerfile`) for problems in the app's context: those are build outcomes, not outages.
      accept: [400, 500],
      untimed: true,
      signal,
    });
    if (!res.ok) {
      const error = await engineMessage(res);
      await spec.onOutput?.(`${error}\n`);
      return { ok: false, error };
    }
    const { progress, exceeded } = await followBuildWithinDisk(this.client, res, progressFor(builder), builder === "classic" ? spec.diskBytes : undefined, spec.onOutput);
    if (exceeded) return { ok: false, error: exceeded, diskExceeded: true };
    if (progress.error !== undefined) {
      return { ok: false, error: progress.error, ...(progress.lastStep ? { failedStep: progress.lastStep } : {}) };
    }
    if (!progress.imageId) throw new RuntimeUnavailableError("The container engine ended the build without a result.");
    return { ok: true, image: spec.tag };
  }

  /** The builder for this build; whether the engine has BuildKit is asked once per engine. */
  private async builderFor(spec: BuildSpec): Promise<Builder> {
    if (this.builderChoice === "classic" || chooseBuilder(this.builderChoice, true, spec) === "classic") return "classic";
    let known = BUILDKIT_SUPPORT.get(this.engineUrl);
    if (!known) {
      known = supportsBuildKit(this.client);
      BUILDKIT_SUPPORT.set(this.engineUrl, known);
      // An engine that could not be asked is asked again next time.
      known.catch(() => BUILDKIT_SUPPORT.delete(this.engineUrl));
    }
    return chooseBuilder(this.builderChoice, await known, spec);
  }

  async hasImage(image: string): Promise<boolean> {
    const res = await this.client.request("GET", `/images/${imagePath(image)}/json`, { accept: [404] });
    await res.arrayBuffer();
    return res.ok;
  }

  async imageDigest(image: string): Promise<string | null> {
    const res = await this.client.request("GET", `/images/${imagePath(image)}/json`, { accept: [404] });
    if (!res.ok) return void (await res.arrayBuffer()), null;
    const body = (await res.json()) as { Id?: unknown };
    return typeof body.Id === "string" ? body.Id : null;
  }

  async removeImage(image: string): Promise<void> {
    const res = await this.client.request("DELETE", `/images/${imagePath(image)}`, { query: { force: "1" }, accept: [404] });
    await res.arrayBuffer();
  }

  async images(repository: string): Promise<string[]> {
    // `reference=<name>` matches every tag of that name (and nothing of another name).
    const filters = JSON.stringify({ reference: [repository] });
    const { body } = await this.client.json<{ RepoTags?: string[] | null }[]>("GET", "/images/json", { query: { filters } });
    return body.flatMap((i) => (i.RepoTags ?? []).filter((t) => t.slice(0, t.lastIndexOf(":")) === repository));
  }

  listImages(prefix: string): Promise<ListedObject[]> {
    return listImages(this.client, prefix);
  }
}

class BuildTimeout extends Error {
  constructor(readonly seconds: number) {
    super(`The build did not finish within ${seconds} s.`);
  }
}

/** An image reference in a path: `registry/name:tag` keeps its slashes, as the engine routes it. */
export function imagePath(image: string): string {
  return image.split("/").map(encodeURIComponent).join("/");
}
