/**
 * docs/apps.md, contract 1: the build uses the repository's container build file.
 * `Root directory` is the build context (default: the repository root) and `Dockerfile path` is
 * relative to that root directory, not to the repository root (default: `Dockerfile`).
 */

/** The build file used when `Dockerfile path` is left blank. */
export const DEFAULT_DOCKERFILE = "Dockerfile";

/** How many found build files a failed-deploy message names before summarising the rest. */
const MAX_LISTED_BUILD_FILES = 20;

export type PathResult = { ok: true; path: string } | { ok: false; message: string };

export type BuildFileResult = { ok: true; path: string; inContext: string } | { ok: false; message: string };

/**
 * Normalises a path typed into a setting to a repository-style relative path: trimmed, without a
 * leading `./` or `/` (both read as "from the top"), `//` collapsed, `.` segments dropped and `..`
 * resolved. `''` is the top itself. `label` names the setting in messages; `within` names what a
 * `..` may not leave.
 */
export function normalizeRepoPath(input: string, label = "Path", within = "the repository"): PathResult {
  const text = input.trim();
  if (text.includes("\\")) return { ok: false, message: `${label} "${text}" uses a backslash; use forward slashes (/).` };
  // Control characters are never part of a real repository path and would corrupt a tar header.
  if (/[\u0000-\u001f\u007f]/.test(text)) return { ok: false, message: `${label} contains a control character.` };
  if (/^[A-Za-z]:/.test(text) || text.startsWith("~")) {
    return { ok: false, message: `${label} "${text}" must be a path inside ${within}, not a path on a computer.` };
  }
  const segments: string[] = [];
  for (const segment of text.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (segments.length === 0) return { ok: false, message: `${label} "${text}" leads outside ${within}.` };
      segments.pop();
      continue;
    }
    segments.push(segment);
  }
  return { ok: true, path: segments.join("/") };
}

/**
 * Resolves the two build settings (contract 1) to the build file's repository-relative `path` and
 * its path `inContext`, relative to the root directory (what the engine is told). Blank settings
 * take their defaults. The build file must stay inside the root directory, since only the root
 * directory is sent to the engine.
 */
export function resolveBuildFile(rootDirectory: string, dockerfilePath: string): BuildFileResult {
  const root = normalizeRepoPath(rootDirectory, "Root directory");
  if (!root.ok) return root;
  const typed = dockerfilePath.trim() === "" ? DEFAULT_DOCKERFILE : dockerfilePath.trim();
  if (typed.endsWith("/")) {
    return { ok: false, message: `Dockerfile path "${typed}" names a folder; give the file, e.g. "${typed}Dockerfile".` };
  }
  const file = normalizeRepoPath(typed, "Dockerfile path", "the root directory");
  if (!file.ok) return file;
  if (file.path === "") return { ok: false, message: `Dockerfile path "${typed}" does not name a file.` };
  return { ok: true, path: root.path === "" ? file.path : `${root.path}/${file.path}`, inContext: file.path };
}

/**
 * Whether a file name (no folders) is a container build file, for the "build files found" list:
 * `Dockerfile`, `Containerfile`, `<name>.Dockerfile` and `Dockerfile.<suffix>`.
 *
 * Case-insensitive on purpose: the list helps someone whose build failed, and a `dockerfile` or
 * `web.dockerfile` is exactly the near miss they need to see. The build itself uses the exact path.
 */
export function isBuildFileName(basename: string): boolean {
  const name = basename.toLowerCase();
  if (name === "dockerfile" || name === "containerfile") return true;
  if (name.endsWith(".dockerfile") && name.length > ".dockerfile".length) return true;
  return name.startsWith("dockerfile.") && name.length > "dockerfile.".length;
}

/**
 * The failed-deploy message when nothing exists at the resolved build-file path (docs/apps.md,
 * "Failed-deploy messages"): names the path and lists the build files found in the repository.
 */
export function missingBuildFileMessage(path: string, found: readonly string[]): string {
  const head = `Nothing to build: no file at "${path}".`;
  if (found.length === 0) return `${head} No build files were found in the repository.`;
  const listed = found.slice(0, MAX_LISTED_BUILD_FILES).join(", ");
  const more = found.length > MAX_LISTED_BUILD_FILES ? ` and ${found.length - MAX_LISTED_BUILD_FILES} more` : "";
  return `${head} Build files in the repository: ${listed}${more}.`;
}
