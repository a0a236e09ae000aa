/**
 * The commit a deploy builds: its SHA and message, as the forge tells them. The archive names the
 * commit: every forge makes it with git archive, which writes the SHA in a pax `comment` record,
 * and the top folder is `<repo>-<sha>` on GitHub and `<repo>-<ref>-<sha>` on GitLab; the
 * forge's API gives the branch's head commit with its message on all three (GitHub, GitLab,
 * Gitea/Forgejo). Reading the commit never fails a deploy: a forge that does not say leaves it
 * unknown.
 */
import { tokenHeader } from "./token-header";
import { type SourcePolicy, addressRefusal } from "./address";
import { normalizeRepository } from "./forge";

export interface Commit {
  sha: string;
  message: string;
}

/** Longest message kept (the first line is what the history shows; the rest is kept up to this). */
export const COMMIT_MESSAGE_MAX = 2000;

const SHA = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;

/** The commit SHA an archive's top folder ends with (`<name>-<40 or 64 hex>`), or null. */
export function commitFromTopFolder(folder: string | null): string | null {
  const match = folder ? /-([0-9a-f]{40}|[0-9a-f]{64})$/.exec(folder) : null;
  return match ? match[1]! : null;
}

/** The commit an archive names: git archive's pax `comment` record when it is a SHA, else the top folder's. */
export function commitFromArchive(paxComment: string | null, topFolder: string | null): string | null {
  if (paxComment && SHA.test(paxComment)) return paxComment;
  return commitFromTopFolder(topFolder);
}

/** Which forge API answers for a repository, read from its host like `archiveUrl` does. */
export function commitApiUrl(repository: string, branch: string): string {
  const base = new URL(normalizeRepository(repository));
  const path = base.pathname.replace(/^\//, "");
  const ref = encodeURIComponent(branch);
  if (base.hostname === "github.com") return `https://api.github.com/repos/${path}/commits/${ref}`;
  if (base.hostname === "gitlab.com" || base.hostname.startsWith("gitlab.")) {
    return `${base.origin}/api/v4/projects/${encodeURIComponent(path)}/repository/commits/${ref}`;
  }
  return `${base.origin}/api/v1/repos/${path}/branches/${ref}`;
}

/**
 * The commit in a forge API reply: GitHub `{sha, commit: {message}}`, GitLab `{id, message}`,
 * Gitea/Forgejo `{commit: {id, message}}`. Null when the reply has no well-formed SHA.
 */
export function commitFromApiReply(body: unknown): Commit | null {
  if (typeof body !== "object" || body === null) return null;
  const b = body as Record<string, unknown>;
  const nested = typeof b.commit === "object" && b.commit !== null ? (b.commit as Record<string, unknown>) : {};
  const sha = [b.sha, b.id, nested.id, nested.sha].find((v): v is string => typeof v === "string" && SHA.test(v.toLowerCase()));
  if (!sha) return null;
  const message = [nested.message, b.message].find((v): v is string => typeof v === "string") ?? "";
  return { sha: sha.toLowerCase(), message: cleanMessage(message) };
}

/** A message as stored: control characters but newlines and tabs dropped, trailing space trimmed, capped. */
export function cleanMessage(message: string): string {
  // eslint-disable-next-line no-control-regex
  return message.replace(/\r\n/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "").trimEnd().slice(0, COMMIT_MESSAGE_MAX);
}

/**
 * The commit a deploy records. The archive's folder names what was built, so its SHA wins; the
 * API's message goes with it only when the API named the same commit (a push between the two
 * requests would pair a message with the wrong commit: the message is then left empty). With no
 * SHA in the folder (Gitea/Forgejo), the API's commit is the branch head the archive was made from.
 */
export function pickCommit(fromArchive: string | null, fromApi: Commit | null): Commit | null {
  if (fromArchive) return { sha: fromArchive, message: fromApi?.sha === fromArchive ? fromApi.message : "" };
  return fromApi;
}

/** How long the API may take; a slow forge leaves the commit unknown rather than delay the deploy. */
export const COMMIT_API_TIMEOUT_MS = 5_000;
const MAX_REPLY_BYTES = 256 * 1024;

/**
 * The branch head from the forge's API (with the app's access token, for a private repository), under the same address rule as the archive (no redirect is
 * followed). Null on any failure: an API that is down, private, rate limited or malformed.
 */
export async function fetchCommit(repository: string, branch: string, options: { policy: SourcePolicy; fetch?: typeof fetch; token?: string | null }): Promise<Commit | null> {
  const fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  let url: string;
  try {
    url = commitApiUrl(repository, branch);
  } catch {
    return null;
  }
  if (addressRefusal(url, options.policy)) return null;
  try {
    const res = await fetcher(url, {
      redirect: "manual",
      signal: AbortSignal.timeout(COMMIT_API_TIMEOUT_MS),
      // A private repository's token goes to the forge's own API only (the URL built above).
      headers: { Accept: "application/json", "User-Agent": "control-plane", ...Object.fromEntries([tokenHeader(repository, new URL(url).origin, url, options.token ?? null)].filter((h) => h !== null)) },
    });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return null;
    }
    const text = await boundedText(res, MAX_REPLY_BYTES);
    return text === null ? null : commitFromApiReply(JSON.parse(text));
  } catch {
    return null;
  }
}

/** The body as text, or null once it passes `max` bytes (the rest is not read). */
async function boundedText(res: Response, max: number): Promise<string | null> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    size += next.value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(next.value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) bytes.set(chunk, (at += chunk.byteLength) - chunk.byteLength);
  return new TextDecoder().decode(bytes);
}
