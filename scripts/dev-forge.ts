/**
 * A stand-in for a git forge, for local runs and end-to-end tests (not part of the Worker). It
 * serves `GET /<owner>/<repo>/archive/<branch>.tar.gz` the way Gitea and Forgejo do: the output of
 * `git archive --format=tar.gz --prefix=<repo>-<branch>/ <branch>` (a `/` in the branch becomes
 * `-` in the folder), streamed, for git repositories at `<root>/<owner>/<repo>` (bare or not, with
 * or without `.git`). So a repository address `http://127.0.0.1:<port>/<owner>/<repo>` works with
 * `archiveUrl` like any Gitea one. Gitea's branch API, `GET /api/v1/repos/<owner>/<repo>/branches/<branch>`,
 * answers `{name, commit: {id, message}}` with the branch's head commit, as deploys read it.
 *
 *   tsx scripts/dev-forge.ts --root DIR [--port N]
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { branchProblem } from "../src/source/forge";

/** Port the command line uses when none is given. */
export const DEFAULT_DEV_FORGE_PORT = 3900;

/** Identity for the commits this script makes, given per command so no git config is touched. */
const IDENTITY = ["-c", "user.name=Dev Forge", "-c", "user.email=dev-forge@example.invalid", "-c", "commit.gpgsign=false"];

const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

export interface DevForge {
  /** Base address, e.g. `http://127.0.0.1:3900`; repositories are `<url>/<owner>/<repo>`. */
  url: string;
  close(): Promise<void>;
}

/** Starts the forge on `host` (loopback only) and `port` (0 for any free one). */
export async function startDevForge(options: { root: string; port?: number; host?: "127.0.0.1" }): Promise<DevForge> {
  const root = resolve(options.root);
  const host = options.host ?? "127.0.0.1";
  const server = createServer((req, res) => {
    const notFound = (text: string) => res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end(`${text}\n`);
    const api = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/branches\/(.+)$/.exec(new URL(req.url ?? "/", "http://forge").pathname);
    if (req.method === "GET" && api) return void branchHead(root, api.slice(1).map((part) => safeDecode(part ?? "")), res);
    const match = /^\/([^/]+)\/([^/]+)\/archive\/(.+)\.tar\.gz$/.exec(new URL(req.url ?? "/", "http://forge").pathname);
    if (req.method !== "GET" || !match) return notFound("Not found. Archives are at /<owner>/<repo>/archive/<branch>.tar.gz.");
    const [owner, repo, branch] = match.slice(1).map((part) => safeDecode(part ?? ""));
    if (!owner || !repo || !branch || !NAME.test(owner) || !NAME.test(repo) || branchProblem(branch) !== null) {
      return notFound("No such repository or branch.");
    }
    const dir = repositoryDir(root, owner, repo);
    if (dir === null) return notFound(`No repository ${owner}/${repo}.`);
    void (async () => {
      if (!(await git(dir, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`]).then(() => true, () => false))) {
        return notFound(`No branch ${branch} in ${owner}/${repo}.`);
      }
      const prefix = `${repo.replace(/\.git$/, "")}-${branch.replaceAll("/", "-")}/`;
      const child = spawn("git", ["-C", dir, "archive", "--format=tar.gz", `--prefix=${prefix}`, `refs/heads/${branch}`], { stdio: ["ignore", "pipe", "pipe"] });
      res.writeHead(200, { "content-type": "application/gzip" });
      child.stdout.pipe(res);
      child.on("close", (code) => {
        // Headers are gone by now: a failed archive can only cut the body short.
        if (code !== 0) res.destroy(new Error(`git archive exited with ${code}`));
      });
      res.on("close", () => child.kill());
    })();
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(options.port ?? DEFAULT_DEV_FORGE_PORT, host, () => done());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** Gitea's branch reply for `[owner, repo, branch]`: the head commit's id and message, or 404 as Gitea answers. */
async function branchHead(root: string, [owner, repo, branch]: (string | null)[], res: import("node:http").ServerResponse): Promise<void> {
  const missing = () => void res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ message: "branch does not exist" }));
  if (!owner || !repo || !branch || !NAME.test(owner) || !NAME.test(repo) || branchProblem(branch) !== null) return missing();
  const dir = repositoryDir(root, owner, repo);
  if (dir === null) return missing();
  const out = await git(dir, ["log", "-1", "--format=%H%n%B", `refs/heads/${branch}`]).catch(() => null);
  if (out === null) return missing();
  const newline = out.indexOf("\n");
  const commit = { id: out.slice(0, newline), message: out.slice(newline + 1).replace(/\n+$/, "\n") };
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name: branch, commit }));
}

function safeDecode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

/** `<root>/<owner>/<repo>` or `<root>/<owner>/<repo>.git`, whichever is a repository. */
function repositoryDir(root: string, owner: string, repo: string): string | null {
  for (const name of [repo, `${repo}.git`]) {
    const dir = join(root, owner, name);
    if (existsSync(join(dir, ".git")) || existsSync(join(dir, "HEAD"))) return dir;
  }
  return null;
}

export interface CommitOptions {
  /** Branch to commit on; created from the current one when new. Default `main`. */
  branch?: string;
  /** File modes, e.g. `{ "run.sh": 0o755 }` (git keeps only the executable bit). */
  modes?: Record<string, number>;
  /** Symbolic links to add: path -> target. */
  symlinks?: Record<string, string>;
  /** Paths to delete in this commit. */
  remove?: string[];
  message?: string;
}

/**
 * Creates `<root>/<owner>/<repo>` as a git repository whose first commit holds `files`, and
 * returns its address on the forge at `forgeUrl` (default: the command line's address).
 */
export async function createRepository(
  root: string,
  owner: string,
  repo: string,
  files: Record<string, string | Uint8Array>,
  options: CommitOptions & { forgeUrl?: string } = {},
): Promise<string> {
  const dir = join(resolve(root), owner, repo);
  await mkdir(dir, { recursive: true });
  await git(dir, ["init", "--quiet", `--initial-branch=${options.branch ?? "main"}`]);
  await commitFiles(root, owner, repo, files, options);
  return `${options.forgeUrl ?? `http://127.0.0.1:${DEFAULT_DEV_FORGE_PORT}`}/${owner}/${repo}`;
}

/** Adds a commit to a repository made by `createRepository`; returns the commit id. */
export async function commitFiles(
  root: string,
  owner: string,
  repo: string,
  files: Record<string, string | Uint8Array>,
  options: CommitOptions = {},
): Promise<string> {
  const dir = join(resolve(root), owner, repo);
  const branch = options.branch ?? "main";
  const known = await git(dir, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]).then(() => true, () => false);
  const hasHead = await git(dir, ["rev-parse", "--verify", "--quiet", "HEAD"]).then(() => true, () => false);
  if (known) await git(dir, ["checkout", "--quiet", branch]);
  else if (hasHead) await git(dir, ["checkout", "--quiet", "-b", branch]);
  for (const path of options.remove ?? []) await rm(join(dir, path), { recursive: true, force: true });
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
    if (options.modes?.[path] !== undefined) await chmod(join(dir, path), options.modes[path]);
  }
  for (const [path, target] of Object.entries(options.symlinks ?? {})) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await rm(join(dir, path), { force: true });
    await symlink(target, join(dir, path));
  }
  await git(dir, ["add", "--all"]);
  await git(dir, [...IDENTITY, "commit", "--quiet", "--allow-empty", "-m", options.message ?? "Update files"]);
  return (await git(dir, ["rev-parse", "HEAD"])).trim();
}

/** Runs git in `dir`; resolves with its output, rejects with its error text. */
function git(dir: string, args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn("git", ["-C", dir, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done(out) : fail(new Error(`git ${args.join(" ")}: ${err.trim() || `exit ${code}`}`))));
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const arg = (name: string) => {
    const index = process.argv.indexOf(name);
    return index === -1 ? undefined : process.argv[index + 1];
  };
  const root = arg("--root");
  if (!root) {
    console.error("Usage: tsx scripts/dev-forge.ts --root DIR [--port N]");
    process.exit(2);
  }
  const forge = await startDevForge({ root, port: Number(arg("--port") ?? DEFAULT_DEV_FORGE_PORT) });
  console.log(`Dev forge serving ${resolve(root)} at ${forge.url} (archives: ${forge.url}/<owner>/<repo>/archive/<branch>.tar.gz)`);
  const stop = () => void forge.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
