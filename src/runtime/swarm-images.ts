/**
 * `ImageBuilder` on Docker Swarm: images are built on the manager (as on one engine), then pushed
 * to a Docker Distribution registry, and services run them by digest (`pinned`), so every node
 * pulls exactly what was built. Removing an image removes it on the manager under both its names,
 * and its tag in the registry when the registry's API is known.
 */
import type { DockerEngineClient } from "./docker-client";
import { imagePath } from "./docker-images";
import { RegistryClient } from "./registry";
import { pushResult, registryAuthHeader, splitReference } from "./swarm-rules";
import { readJsonLines } from "./swarm-streams";
import { type BuildOutcome, type BuildSpec, type ImageBuilder, type ListedObject, RuntimeUnavailableError } from "./types";

export class SwarmImages implements ImageBuilder {
  private readonly remoteRegistry: RegistryClient | undefined;

  constructor(
    private readonly client: DockerEngineClient,
    /** The manager's own images (builds run there). */
    private readonly local: ImageBuilder,
    /** Registry host (and optional path prefix) images are pushed to. */
    private readonly registry: string,
    registryApi: { url: string; auth?: { username: string; password: string } } | undefined,
  ) {
    this.remoteRegistry = registryApi ? new RegistryClient(registryApi.url, registryApi.auth) : undefined;
  }

  /** Builds on the manager, then pushes to the registry; the image is then known by its digest. */
  async build(spec: BuildSpec): Promise<BuildOutcome> {
    const outcome = await this.local.build(spec);
    if (!outcome.ok) return outcome;
    const remote = this.remoteOf(spec.tag);
    const { name, tag } = splitReference(remote);
    await (await this.client.request("POST", `/images/${imagePath(spec.tag)}/tag`, { query: { repo: name, tag } })).arrayBuffer();
    const res = await this.client.request("POST", `/images/${imagePath(name)}/push`, { query: { tag }, untimed: true });
    const pushed = pushResult(await readJsonLines(res));
    if ("error" in pushed) throw new RuntimeUnavailableError(`Pushing the image to the registry failed: ${pushed.error}`);
    await spec.onOutput?.(`Pushed ${remote}@${pushed.digest}\n`);
    return { ok: true, image: spec.tag };
  }

  hasImage(image: string): Promise<boolean> {
    return this.local.hasImage(image);
  }

  imageDigest(image: string): Promise<string | null> {
    return this.local.imageDigest(image);
  }

  /** Removes the image on the manager under both its names, and its tag in the registry when reachable. */
  async removeImage(image: string): Promise<void> {
    await this.local.removeImage(this.remoteOf(image));
    await this.local.removeImage(image);
    if (this.remoteRegistry) {
      const { name, tag } = splitReference(this.remoteOf(image));
      // A tag is in use while the manager still has the image it names (removed images lose theirs first).
      await this.remoteRegistry.deleteTag(name.slice(name.indexOf("/") + 1), tag, (other) => this.local.hasImage(`${name}:${other}`));
    }
  }

  images(repository: string): Promise<string[]> {
    return this.local.images(repository);
  }

  /** The manager's images under the names the control plane gave them (their registry copies follow them on removal). */
  listImages(prefix: string): Promise<ListedObject[]> {
    return this.local.listImages(prefix);
  }

  /** The registry reference by digest of an image built here, e.g. `reg/cp-app-1:d1@sha256:…`. */
  async pinned(image: string): Promise<string> {
    const remote = this.remoteOf(image);
    const { name } = splitReference(remote);
    const { status, body } = await this.client.json<{ RepoDigests?: string[] }>("GET", `/images/${imagePath(remote)}/json`, { accept: [404] });
    const digest = status === 404 ? undefined : body.RepoDigests?.find((d) => d.startsWith(`${name}@`));
    if (!digest) throw new RuntimeUnavailableError(`The image ${image} was not pushed to the registry; build it again.`);
    return `${remote}@${digest.slice(name.length + 1)}`;
  }

  private remoteOf(image: string): string {
    return `${this.registry}/${image}`;
  }
}

/** Engine calls that reach the registry: a push, and service writes (the nodes then pull). */
const REGISTRY_CALLS = /\/(images\/.+\/push|services\/create|services\/[^/]+\/update|distribution\/.+\/json)$/;

/** `fetch` that adds the registry credentials to the calls that push or make nodes pull, never to others. */
export function registryFetch(base: typeof fetch, registry: string, auth: { username: string; password: string } | undefined): typeof fetch {
  // The engine wants the header on a push even without credentials (then `{}`).
  const header = registryAuthHeader(auth ?? null, registry.split("/")[0]!);
  return (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!REGISTRY_CALLS.test(new URL(url).pathname)) return base(input, init);
    const headers = new Headers(init?.headers);
    headers.set("X-Registry-Auth", header);
    return base(input, { ...init, headers });
  };
}
