import { type SourcePolicy, addressRefusal, classifyHost } from "./address";

/**
 * Where an app's source comes from: a git repository on a forge, fetched as the forge's gzip tar
 * archive of one branch. Rules for the repository address and branch name, and the archive URL
 * for GitHub, GitLab and Gitea/Forgejo (any other host).
 */

/** Loopback hosts, where plain http is accepted so a local dev forge can stand in for a real one. */
function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

const EXAMPLE = "https://github.com/owner/repo";

/**
 * The message a user sees for a repository address, or null when it is usable: an https address
 * of a repository (http only on a loopback host), with no credentials, query or fragment, naming
 * at least an owner and a repository (exactly those two on github.com), never at a link-local or
 * cloud metadata address. Given a policy, also the address rule of the fetch (address.ts): http
 * and loopback or private addresses only when local sources are allowed.
 */
export function repositoryProblem(url: string, policy?: SourcePolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return `Enter the repository's web address, like ${EXAMPLE}.`;
  }
  if ((parsed.protocol === "http:" || parsed.protocol === "https:") && classifyHost(parsed.hostname) === "forbidden") {
    return "Deploys never fetch from link-local, cloud metadata or reserved addresses; use the repository's public https:// address.";
  }
  if (policy && (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.username === "" && parsed.password === "") {
    const refusal = addressRefusal(parsed, policy);
    if (refusal === "local") return "Deploys fetch from loopback or private addresses only when ALLOW_LOCAL_SOURCES is on; use the repository's public https:// address.";
    if (refusal === "http") return "Use the repository's https:// address; http is accepted only when ALLOW_LOCAL_SOURCES is on.";
  }
  if (parsed.protocol === "http:" && !isLoopback(parsed.hostname)) {
    return "Use the repository's https:// address; http is accepted only for a forge on this machine.";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return `Use the repository's https:// address, like ${EXAMPLE}.`;
  }
  // Secrets in a stored URL end up in logs and pages; private sources need a separate mechanism.
  if (parsed.username !== "" || parsed.password !== "") return "Remove the user name or password from the repository address.";
  if (parsed.search !== "" || parsed.hash !== "") return "Remove the ? or # part from the repository address.";
  const segments = repositorySegments(parsed);
  if (segments.length < 2) return `The address must name the owner and the repository, like ${EXAMPLE}.`;
  if (parsed.hostname === "github.com" && segments.length !== 2) {
    return `A GitHub address names just the owner and the repository, like ${EXAMPLE}.`;
  }
  return null;
}

/**
 * The repository's address in one canonical form: lowercase scheme and host, no trailing `/` or
 * `.git`. Call it on an address `repositoryProblem` accepted; it throws on one that is not a URL.
 */
export function normalizeRepository(url: string): string {
  const parsed = new URL(url.trim());
  return `${parsed.protocol}//${parsed.host}/${repositorySegments(parsed).join("/")}`;
}

/** Path segments of a repository URL, `.git` and empty segments dropped. */
function repositorySegments(parsed: URL): string[] {
  const segments = parsed.pathname.split("/").filter((segment) => segment !== "");
  const last = segments.length - 1;
  if (last >= 0 && segments[last]!.endsWith(".git")) {
    segments[last] = segments[last]!.slice(0, -".git".length);
    if (segments[last] === "") segments.pop();
  }
  return segments;
}

/** Each `/`-separated part of a branch URL-encoded, the slashes kept (forges route on them). */
function encodeBranch(branch: string): string {
  return branch.split("/").map(encodeURIComponent).join("/");
}

/** Which forge a repository is on: GitHub and GitLab by host name, any other host read as Gitea/Forgejo. */
export function forgeOf(repository: string): "github" | "gitlab" | "gitea" {
  const host = new URL(normalizeRepository(repository)).hostname;
  if (host === "github.com") return "github";
  if (host === "gitlab.com" || host.startsWith("gitlab.")) return "gitlab";
  return "gitea";
}

/**
 * The URL of the gzip tar archive of `branch` of a repository (normalised or not):
 * - GitHub: `https://codeload.github.com/<owner>/<repo>/tar.gz/refs/heads/<branch>` (where
 *   `github.com/.../archive/...` redirects to; naming refs/heads avoids a tag of the same name);
 * - GitLab (gitlab.com, or a host starting with `gitlab.`):
 *   `https://<host>/<path>/-/archive/<branch>/<name>-<branch>.tar.gz`;
 * - any other host, read as Gitea or Forgejo: `<repository>/archive/<branch>.tar.gz`.
 *
 * A private repository (`withToken`) is read through the forge's API, which takes a token header:
 * - GitHub: `https://api.github.com/repos/<owner>/<repo>/tarball/refs/heads/<branch>` (it
 *   redirects to codeload with a short-lived signed address);
 * - GitLab: `https://<host>/api/v4/projects/<url-encoded path>/repository/archive.tar.gz?sha=<branch>`;
 * - Gitea/Forgejo: `<base>/api/v1/repos/<owner>/<repo>/archive/<branch>.tar.gz`, the base being
 *   whatever precedes the owner (a forge served under a path).
 */
export function archiveUrl(repository: string, branch: string, options: { withToken?: boolean } = {}): string {
  const base = normalizeRepository(repository);
  const parsed = new URL(base);
  const segments = repositorySegments(parsed);
  const ref = encodeBranch(branch);
  const forge = forgeOf(base);
  if (options.withToken) {
    if (forge === "github") return `https://api.github.com/repos/${segments.join("/")}/tarball/refs/heads/${ref}`;
    if (forge === "gitlab") return `${parsed.origin}/api/v4/projects/${encodeURIComponent(segments.join("/"))}/repository/archive.tar.gz?sha=${encodeURIComponent(branch)}`;
    const prefix = segments.slice(0, -2).map((s) => `/${s}`).join("");
    return `${parsed.origin}${prefix}/api/v1/repos/${segments.slice(-2).join("/")}/archive/${ref}.tar.gz`;
  }
  if (forge === "github") {
    return `https://codeload.github.com/${segments.join("/")}/tar.gz/refs/heads/${ref}`;
  }
  if (forge === "gitlab") {
    const name = segments[segments.length - 1] ?? "";
    // GitLab names the file after the project and the ref, a `/` in the ref becoming `-`.
    return `${base}/-/archive/${ref}/${encodeURIComponent(`${name}-${branch.replaceAll("/", "-")}`)}.tar.gz`;
  }
  return `${base}/archive/${ref}.tar.gz`;
}

/**
 * The message a user sees for a deploy branch name, or null when it is usable: git's ref-name
 * rules, simplified (no spaces or control characters, no `..`, no leading `-`, none of
 * `~^:?*[\`, no `@{`, no empty or dot-led part, not ending in `.lock`, `/` or `.`).
 */
export function branchProblem(name: string): string | null {
  if (name === "") return "Enter a branch name.";
  if (/[\s\u0000-\u001f\u007f]/.test(name)) return "A branch name cannot contain spaces or control characters.";
  if (/[~^:?*[\\]/.test(name)) return "A branch name cannot contain any of ~ ^ : ? * [ \\.";
  if (name.startsWith("-")) return "A branch name cannot start with a hyphen.";
  if (name.includes("..")) return "A branch name cannot contain two dots in a row.";
  if (name.includes("@{") || name === "@") return "A branch name cannot be @ or contain @{.";
  if (name.endsWith("/") || name.endsWith(".")) return "A branch name cannot end with a slash or a dot.";
  if (name.endsWith(".lock")) return "A branch name cannot end with .lock.";
  if (name.split("/").some((part) => part === "" || part.startsWith("."))) {
    return "Each part of a branch name between slashes must be non-empty and not start with a dot.";
  }
  return null;
}
