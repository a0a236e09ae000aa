/**
 * Shared by the client's end-to-end tests: building and running the client the way users do, an
 * account and database per test (so one test's cooldown or call rate never holds up another),
 * direct API calls, and checking archives.
 */
import { execFile, spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { ROOT } from "../../scripts/lib/dev-server";
import { DEMO_SQL } from "../../scripts/lib/seed";
import { localD1 } from "./harness";

/** The single-file client `npm run build:cli` writes; the package's bin points at it. */
export const BUNDLE = join(ROOT, "build", "dbexport.mjs");

/**
 * Builds the client bundle with the package's own `build:cli` script (what `npm install` runs),
 * so tests never run a stale one; `outfile` keeps parallel test files from writing the same file.
 */
export async function buildClient(outfile = BUNDLE): Promise<string> {
  await promisify(execFile)("npm", ["run", "-s", "build:cli", "--", `--outfile=${outfile}`], { cwd: ROOT });
  return outfile;
}

/**
 * The environment of a user's shell: PATH without any `node_modules/.bin` (where npm scripts put
 * the project's Node 24), so `node` is the system Node the client must support (>= 20).
 */
export function userEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  env.PATH = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !dir.includes("node_modules/.bin"))
    .join(delimiter);
  for (const key of Object.keys(env)) if (key.startsWith("npm_") || key === "INIT_CWD") delete env[key];
  return env;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A command started in the background: its outcome, and a way to wait for a line on stderr. */
export interface Started {
  result: Promise<Run>;
  /** Resolves once stderr contains `text`; rejects if the command ends first. */
  stderrContains(text: string): Promise<void>;
  /** Ends the command if it still runs (a test that failed half-way must not leave it polling). */
  kill(): void;
}

/** Starts a command, collecting its output; `result` never rejects on a non-zero exit. */
export function start(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Started {
  const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  const result = new Promise<Run>((done, fail) => {
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
  const watchers: (() => void)[] = [];
  child.stderr.on("data", (d) => {
    stderr += d;
    for (const check of watchers) check();
  });
  return {
    result,
    stderrContains: (text) =>
      new Promise<void>((ok, fail) => {
        const check = () => stderr.includes(text) && ok();
        watchers.push(check);
        check();
        void result.then(() => fail(new Error(`ended without printing "${text}":\n${stderr}`)));
      }),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    },
  };
}

/** Runs a command to its end, collecting its output; never rejects on a non-zero exit. */
export function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Run> {
  return start(command, args, options).result;
}

/** Starts the built client `bundle` with the system Node, as an installed bin runs. */
export function startClient(bundle: string, args: string[], options: { cwd: string; env: Record<string, string> }): Started {
  return start("node", [bundle, ...args], { cwd: options.cwd, env: userEnv(options.env) });
}

/** Runs the built client `bundle` to its end. */
export function runClient(bundle: string, args: string[], options: { cwd: string; env: Record<string, string> }): Promise<Run> {
  return startClient(bundle, args, options).result;
}

/**
 * Sets an export's status in the local D1 of a running `wrangler dev`: locally the queue runs an
 * export the moment it starts, so a test that needs one still in flight holds it there itself.
 */
export async function setExportStatus(persistTo: string, exportId: string, status: "running" | "ready"): Promise<void> {
  await localD1(persistTo, `UPDATE exports SET status = '${status}' WHERE id = '${exportId}'`);
}

export function sha256Of(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** A console account of its own (so its call-rate allowance is its own) with an API token. */
export interface TestAccount {
  token: string;
  /** Creates a database holding the demo data and `fillerRows` rows of filler; returns its id. */
  createDatabase(name: string, fillerRows?: number): Promise<string>;
}

/** Signs up `email` through the console's JSON routes and creates an API token for it. */
export async function createAccount(base: string, email: string): Promise<TestAccount> {
  const signup = await fetch(`${base}/console/api/signup`, {
    method: "POST",
    headers: { Origin: base, "Content-Type": "application/json" },
    body: JSON.stringify({ email, password: "e2e-password-123" }),
  });
  const cookie = signup.headers.get("set-cookie")?.split(";")[0];
  if (!signup.ok || !cookie) throw new Error(`signup answered ${signup.status}: ${await signup.text()}`);
  const call = async <T>(path: string, body: unknown): Promise<T> => {
    const res = await fetch(base + path, {
      method: "POST",
      headers: { Origin: base, Cookie: cookie, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  };
  const { token } = await call<{ token: string }>("/console/api/tokens", { name: "e2e" });
  return {
    token,
    async createDatabase(name, fillerRows = 0) {
      const { id } = await call<{ id: string }>("/console/api/databases", { name });
      await call(`/console/api/databases/${id}/sql`, { sql: DEMO_SQL });
      if (fillerRows > 0) {
        const sql = `CREATE TABLE filler (id INTEGER PRIMARY KEY, note TEXT);
          WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ${fillerRows})
          INSERT INTO filler SELECT x, hex(randomblob(16)) || ' row ' || x FROM n;`;
        await call(`/console/api/databases/${id}/sql`, { sql });
      }
      return id;
    },
  };
}

/** Starts an export directly, as another process would (waiting out a rate limit); returns the reply. */
export async function startExport(base: string, token: string, databaseId: string): Promise<{ url: string; expires_at: string }> {
  for (;;) {
    const res = await fetch(`${base}/api/v1/dbs/${databaseId}/export`, { method: "POST", headers: { Authorization: `Bearer ${token}` } });
    if (res.status === 200) return (await res.json()) as { url: string; expires_at: string };
    const body = await res.text();
    if (res.status !== 429 || !body.includes("RATE_LIMIT_EXCEEDED")) throw new Error(`start answered ${res.status}: ${body}`);
    await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after") ?? 1) * 1000));
  }
}

/** Spends the token's whole call-rate allowance, so its next call answers 429 RATE_LIMIT_EXCEEDED. */
export async function spendAllowance(base: string, token: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${base}/api/v1/dbs/${randomUUID()}/export`, { method: "POST", headers: { Authorization: `Bearer ${token}` } });
    if (res.status === 429) return;
    await res.body?.cancel();
  }
}

/** Polls a download link as the spec says (503 and 429 wait Retry-After) until the whole archive arrives. */
export async function fetchArchive(url: string): Promise<{ bytes: Buffer; sha256: string | null }> {
  for (;;) {
    const res = await fetch(url);
    if (res.status === 503 || res.status === 429) {
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, Number(res.headers.get("retry-after") ?? 1) * 1000));
      continue;
    }
    if (res.status !== 200) throw new Error(`download answered ${res.status}: ${await res.text()}`);
    return { bytes: Buffer.from(await res.arrayBuffer()), sha256: res.headers.get("x-export-sha256") };
  }
}

/** Restores an archive with the sqlite3 CLI, as SPEC's users do, and counts the demo customers. */
export async function restoredCustomers(archive: string): Promise<number> {
  const db = `${archive}.restored.db`;
  const script = `gunzip -c "$1" | sqlite3 "$2" && sqlite3 "$2" 'SELECT count(*) FROM customers'`;
  const { stdout } = await promisify(execFile)("bash", ["-c", script, "restore", archive, db]);
  return Number(stdout.trim());
}
