/**
 * The Docker Distribution registry's own HTTP API, for what the Engine API cannot do: deleting an
 * image from the registry when its app is deleted (the registry must run with
 * `storage.delete.enabled: true`; its garbage collector then frees the blobs).
 */
import { RuntimeUnavailableError } from "./types";

const MANIFEST_TYPES = [
  "application/vnd.docker.distribution.manifest.v2+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.oci.image.index.v1+json",
].join(", ");

export class RegistryClient {
  private readonly base: string;
  private readonly authorization: string | undefined;

  constructor(
    base: string,
    auth: { username: string; password: string } | undefined,
    private readonly fetcher: typeof fetch = (input, init) => fetch(input, init),
  ) {
    this.base = base.replace(/\/+$/, "");
    this.authorization = auth ? `Basic ${btoa(`${auth.username}:${auth.password}`)}` : undefined;
  }

  /**
   * Deletes the manifest `name:tag` points at; a missing one is fine. The registry deletes by
   * digest, which removes every tag on it: when another tag still in use (`inUse`) shares the
   * digest (an unchanged rebuild), nothing is deleted, since a service may still run that digest.
   */
  async deleteTag(name: string, tag: string, inUse: (tag: string) => Promise<boolean>): Promise<void> {
    const repo = name.split("/").map(encodeURIComponent).join("/");
    const path = `/v2/${repo}/manifests/`;
    const digest = await this.digest(path, tag);
    if (digest === null) return;
    const list = await this.send("GET", `/v2/${repo}/tags/list`, {});
    const tags = list.ok ? ((JSON.parse(list.text || "{}") as { tags?: string[] | null }).tags ?? []) : [];
    for (const other of tags) {
      if (other !== tag && (await this.digest(path, other)) === digest && (await inUse(other))) return;
    }
    const res = await this.send("DELETE", `${path}${encodeURIComponent(digest)}`, {});
    if (res.status === 405) throw new RuntimeUnavailableError("The registry does not allow deletes: set storage.delete.enabled: true in its configuration.");
    if (!res.ok && res.status !== 404) throw new RuntimeUnavailableError(`The registry answered ${res.status} to deleting ${name}:${tag}.`);
  }

  /** The digest a tag points at, or null when there is no such tag. */
  private async digest(path: string, tag: string): Promise<string | null> {
    const head = await this.send("HEAD", `${path}${encodeURIComponent(tag)}`, { Accept: MANIFEST_TYPES });
    if (head.status === 404) return null;
    const digest = head.headers.get("Docker-Content-Digest");
    if (!head.ok || !digest) throw new RuntimeUnavailableError(`The registry answered ${head.status} when asked for a tag of ${path.split("/")[2]}.`);
    return digest;
  }

  private async send(method: string, path: string, headers: Record<string, string>): Promise<{ ok: boolean; status: number; headers: Headers; text: string }> {
    try {
      const res = await this.fetcher(`${this.base}${path}`, {
        method,
        headers: { ...headers, ...(this.authorization ? { Authorization: this.authorization } : {}) },
        signal: AbortSignal.timeout(30_000),
      });
      return { ok: res.ok, status: res.status, headers: res.headers, text: await res.text() };
    } catch {
      throw new RuntimeUnavailableError(`The registry could not be reached (${method} ${path}).`);
    }
  }
}
