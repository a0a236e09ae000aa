/**
 * A stand-in for a git forge, for local runs and end-to-end tests (not part of the Worker). It
 * serves `GET /<owner>/<repo>/archive/<branch>.tar.gz` the way Gitea and Forgejo do: the output of
 * `git archive --format=tar.gz --prefix=<repo>-<branch>/ <branch>` (a `/` in the branch becomes
 * `-` in the folder), streamed, for git repositories at `<root>/<owner>/<repo>` (bare or not, with
 * or without `.git`). So a repository address `http://127.0.0.1:<port>/<owner>/<repo>` works with
 * `archiveUrl` like any Gitea one. Gitea's branch API, `GET /api/v1/repos/<owner>/<repo>/branches/<branch>`,
 * answers `{name, commit: {id, message}}` with the branch's head commit, as deploys read it.
 *
 * Like Gitea it also has:
 * - private repositories: a repository whose git directory holds a `forge-token` file is
 *   private. Its archive is served only through the API path
 *   `/api/v1/repos/<owner>/<repo>/archive/<branch>.tar.gz` with `Authorization: token <token>`
 *   (404 without a token, 401 with another one), and its web archive path answers 404.
 * - push webhooks: `POST /api/v1/repos/<owner>/<repo>/hooks` with Gitea's body
 *   `{"config": {"url": ..., "secret": ...}}` adds one (kept in the git directory's
 *   `forge-hooks.json`); `GET` on the same path lists them with the status of their last
 *   delivery. Every new commit on a branch (made by `commitFiles` or by plain git) is sent to
 *   each hook as Gitea sends a push: `X-Gitea-Event: push`, `X-Gitea-Delivery`,
 *   `X-Gitea-Signature` (hex HMAC-SHA256 of the body under the secret).
 *
 *   tsx scripts/dev-forge.ts --root DIR [--port N]
 */
import { spawn } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { branchProblem } from "../src/source/forge";

/** Port the command line uses when none is given. */
export const DEFAULT_DEV_FORGE_PORT = 3900;

/** Identity for the commits this script makes, given per command so no git config is touched. */
const IDENTITY = ["-c", "user.name=Dev Forge", "-c", "user.email=dev-forge@example.invalid", "-c", "commit.gpgsign=false"];

const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
/** How often branch heads are compared, to send push webhooks for new commits. */
const HOOK_POLL_MS = 500;

export interface DevForge {
  /** Base address, e.g. `http://127.0.0.1:3900`; repositories are `<url>/<owner>/<repo>`. */
  url: string;
  close(): Promise<void>;
}

export interface ForgeHook {
  url: string;
  secret: string;
  /** HTTP status of the last delivery, or null before the first (or when it could not be sent). */
  last_status?: number | null;
}

/** Starts the forge on `host` (loopback only) and `port` (0 for any free one). */
export async function startDevForge(options: { root: string; port?: number; host?: "127.0.0.1" }): Promise<DevForge> {
  const root = resolve(options.root);
  const host = options.host ?? "127.0.0.1";
  const heads = new Map<string, Map<string, string>>();
  const server = createServer((req, res) => {
    const notFound = (text: string) => res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end(`${text}\n`);
    const path = new URL(req.url ?? "/", "http://forge").pathname;
    const hooks = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/hooks$/.exec(path);
    if (hooks) return void hookRoute(root, heads, req, res, hooks[1]!, hooks[2]!);
    const branches = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/branches\/(.+)$/.exec(path);
    if (req.method === "GET" && branches) {
      const [owner, repo] = branches.slice(1).map((part) => safeDecode(part ?? ""));
      const dir = owner && repo && NAME.test(owner) && NAME.test(repo) ? repositoryDir(root, owner, repo) : null;
      const token = dir === null ? null : privateToken(dir);
      // A private repository's branches are told only to its token, as its archives are.
      if (token !== null && req.headers.authorization !== `token ${token}`) return notFound("branch does not exist");
      return void branchHead(root, branches.slice(1).map((part) => safeDecode(part ?? "")), res);
    }
    const api = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/archive\/(.+)\.tar\.gz$/.exec(path);
    const match = api ?? /^\/([^/]+)\/([^/]+)\/archive\/(.+)\.tar\.gz$/.exec(path);
    if (req.method !== "GET" || !match) return notFound("Not found. Archives are at /<owner>/<repo>/archive/<branch>.tar.gz.");
    const [owner, repo, branch] = match.slice(1).map((part) => safeDecode(part ?? ""));
    if (!owner || !repo || !branch || !NAME.test(owner) || !NAME.test(repo) || branchProblem(branch) !== null) {
      return notFound("No such repository or branch.");
    }
    const dir = repositoryDir(root, owner, repo);
    if (dir === null) return notFound(`No repository ${owner}/${repo}.`);
    const token = privateToken(dir);
    if (token !== null) {
      // A private repository, as Gitea treats one: a stranger is told nothing exists.
      const given = req.headers.authorization;
      if (!api || given === undefined) return notFound(`No repository ${owner}/${repo}.`);
      if (given !== `token ${token}`) return void res.writeHead(401, { "content-type": "text/plain; charset=utf-8" }).end("The token is not valid for this repository.\n");
    }
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
  const url = `http://${host}:${port}`;
  let polling = Promise.resolve();
  const timer = setInterval(() => {
    polling = polling.then(() => sendPushHooks(root, url, heads)).catch(() => undefined);
  }, HOOK_POLL_MS);
  timer.unref();
  return {
    url,
    close: async () => {
      clearInterval(timer);
      await polling;
      await new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      });
    },
  };
}

/** The git directory of a repository directory (`.git` inside a work tree, or the bare repository itself). */
function gitDir(dir: string): string {
  return existsSync(join(dir, ".git")) ? join(dir, ".git") : dir;
}

/** The token a private repository requires, or null for a public one. */
function privateToken(dir: string): string | null {
  const file = join(gitDir(dir), "forge-token");
  return existsSync(file) ? readFileSync(file, "utf8").trim() : null;
}

function readHooks(dir: string): ForgeHook[] {
  const file = join(gitDir(dir), "forge-hooks.json");
  if (!existsSync(file)) return [];
  try {
    return JSON.parse(readFileSync(file, "utf8")) as ForgeHook[];
  } catch {
    return [];
  }
}

async function writeHooks(dir: string, hooks: ForgeHook[]): Promise<void> {
  await writeFile(join(gitDir(dir), "forge-hooks.json"), JSON.stringify(hooks, null, 2));
}

/** `git for-each-ref` of the branches: name -> commit. */
async function branchHeads(dir: string): Promise<Map<string, string>> {
  const out = await git(dir, ["for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/heads"]);
  return new Map(out.split("\n").filter(Boolean).map((line) => line.split(" ") as [string, string]));
}

/** `GET` lists a repository's hooks (secrets left out), `POST {config: {url, secret}}` adds one. */
async function hookRoute(root: string, heads: Map<string, Map<string, string>>, req: IncomingMessage, res: ServerResponse, owner: string, repo: string): Promise<void> {
  const reply = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  const dir = NAME.test(owner) && NAME.test(repo) ? repositoryDir(root, owner, repo) : null;
  if (dir === null) return void reply(404, { message: "No such repository." });
  if (req.method === "GET") return void reply(200, readHooks(dir).map(({ url, last_status }) => ({ type: "gitea", active: true, events: ["push"], config: { url, content_type: "json" }, last_status: last_status ?? null })));
  if (req.method !== "POST") return void reply(405, { message: "GET or POST." });
  let text = "";
  for await (const chunk of req) text += chunk;
  let body: { config?: { url?: unknown; secret?: unknown } };
  try {
    body = JSON.parse(text);
  } catch {
    return void reply(422, { message: "The body is not JSON." });
  }
  const url = body.config?.url;
  const secret = body.config?.secret ?? "";
  if (typeof url !== "string" || !/^https?:\/\//.test(url) || typeof secret !== "string") return void reply(422, { message: "config.url (http or https) and config.secret (a string) are required." });
  // Pushes count from now: the branches as they are when the hook is added are not sent.
  if (!heads.has(dir)) heads.set(dir, await branchHeads(dir));
  await writeHooks(dir, [...readHooks(dir), { url, secret, last_status: null }]);
  reply(201, { type: "gitea", active: true, events: ["push"], config: { url, content_type: "json" } });
}

/** Compares each hooked repository's branch heads with the last look, and sends a push for each one that moved. */
async function sendPushHooks(root: string, forgeUrl: string, heads: Map<string, Map<string, string>>): Promise<void> {
  for (const owner of await readdir(root).catch(() => [] as string[])) {
    if (!NAME.test(owner)) continue;
    for (const repo of await readdir(join(root, owner)).catch(() => [] as string[])) {
      const dir = join(root, owner, repo);
      const hooks = readHooks(dir);
      if (hooks.length === 0) continue;
      const now = await branchHeads(dir).catch(() => null);
      if (now === null) continue;
      const before = heads.get(dir);
      heads.set(dir, now);
      if (!before) continue;
      for (const [branch, after] of now) {
        const previous = before.get(branch) ?? "0".repeat(40);
        if (previous === after) continue;
        const message = (await git(dir, ["log", "-1", "--format=%B", after]).catch(() => "")).trim();
        const name = repo.replace(/\.git$/, "");
        const payload = JSON.stringify({
          ref: `refs/heads/${branch}`,
          before: previous,
          after,
          compare_url: "",
          commits: [{ id: after, message }],
          head_commit: { id: after, message },
          repository: { name, full_name: `${owner}/${name}`, html_url: `${forgeUrl}/${owner}/${name}`, owner: { login: owner } },
          pusher: { login: "dev-forge" },
        });
        for (const hook of hooks) hook.last_status = await deliverPush(hook, payload);
        await writeHooks(dir, hooks);
      }
    }
  }
}

async function deliverPush(hook: ForgeHook, payload: string): Promise<number | null> {
  try {
    const res = await fetch(hook.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-gitea-event": "push",
        "x-gitea-delivery": randomUUID(),
        "x-gitea-signature": createHmac("sha256", hook.secret).update(payload).digest("hex"),
      },
      body: payload,
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    return res.status;
  } catch {
    return null;
  }
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
  /** Makes the repository private: its archive is served only with `Authorization: token <token>`. */
  token?: string;
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
  if (options.token) await writeFile(join(dir, ".git", "forge-token"), options.token);
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
