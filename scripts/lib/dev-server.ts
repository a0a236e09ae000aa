/**
 * Starting the Worker locally with `wrangler dev` (local D1, R2, Durable Objects and Queues on
 * disk): used by `npm start`, the end-to-end tests and the benchmarks, so all three run the
 * Worker the same way.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const WRANGLER = join(ROOT, "node_modules", ".bin", "wrangler");

/** Secrets the Worker needs; generated for local runs when `.dev.vars` lacks them. */
export function generateSecrets(): Record<"LINK_SIGNING_KEYS" | "ENV_ENCRYPTION_KEY" | "OPERATOR_TOKEN", string> {
  return {
    OPERATOR_TOKEN: `op_${randomBytes(32).toString("base64url")}`,
    LINK_SIGNING_KEYS: `local1:${randomBytes(32).toString("base64url")}`,
    ENV_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  };
}

/** Adds generated secrets to `.dev.vars` for any that are missing; returns the names added. */
export function ensureDevVars(path = join(ROOT, ".dev.vars")): string[] {
  const existing = existsSync(path) ? readFileSync(path, "utf8") : "";
  const have = new Set(existing.split("\n").map((line) => line.split("=")[0]!.trim()));
  const added = Object.entries(generateSecrets()).filter(([name]) => !have.has(name));
  if (added.length > 0) {
    const lines = added.map(([name, value]) => `${name}="${value}"`).join("\n");
    const prefix = existing === "" ? "# Local settings and secrets for `wrangler dev` (not committed).\n" : existing.endsWith("\n") ? "" : "\n";
    writeFileSync(path, existing + prefix + lines + "\n", { mode: 0o600 });
  }
  return added.map(([name]) => name);
}

/** Ends every `.dev.vars` line npm start writes for its own run, so they are told from the operator's. */
export const WRITTEN_BY_NPM_START = "# written by npm start";

/** One variable of `.dev.vars` as the operator set it (quotes removed; npm start's own lines are not read), or undefined. */
export function readDevVar(name: string, path = join(ROOT, ".dev.vars")): string | undefined {
  if (!existsSync(path)) return undefined;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.endsWith(WRITTEN_BY_NPM_START)) continue;
    const match = /^\s*([A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (match?.[1] === name) return match[2]!.replace(/^(["'])(.*)\1$/, "$2");
  }
  return undefined;
}

export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => ok(port));
    });
  });
}

export interface DevServerOptions {
  port?: number;
  /** Where local D1, R2 and Durable Object data live (wrangler's `--persist-to`). */
  persistTo?: string;
  /** GET /__scheduled runs the cron's work at once (tests of scheduled work; off elsewhere, as deployed). */
  testScheduled?: boolean;
  /** Extra variables (`--var`), overriding wrangler.toml and `.dev.vars`. */
  vars?: Record<string, string>;
  /** Show wrangler's own output (npm start) or keep it for error reports (tests). */
  inheritOutput?: boolean;
  /** Also append wrangler's output to this file (the end-to-end tests' shared Worker: read from other processes). */
  outputFile?: string;
  /** Another Worker's wrangler.toml (the bench's floor Worker): no D1 migrations are applied. */
  config?: string;
}

export interface DevServer {
  url: string;
  port: number;
  process: ChildProcess;
  /** wrangler's output so far, for failure reports. */
  output: () => string;
  stop: () => Promise<void>;
}

/** Applies the D1 migrations to the local database. */
export async function applyLocalMigrations(persistTo?: string): Promise<void> {
  const args = ["d1", "migrations", "apply", "DB", "--local", ...(persistTo ? ["--persist-to", persistTo] : [])];
  await promisify(execFile)(WRANGLER, args, { cwd: ROOT, env: { ...process.env, CI: "1" } });
}

/**
 * Where a local state with every migration applied is kept, named by what it was made from (the
 * migrations and wrangler.toml): applying them takes wrangler a minute on a busy 2-core machine,
 * copying the result a few milliseconds.
 */
function migratedStateDir(): string {
  const hash = createHash("sha256");
  const migrations = join(ROOT, "migrations");
  for (const name of readdirSync(migrations).filter((n) => n.endsWith(".sql")).sort()) hash.update(name).update(readFileSync(join(migrations, name)));
  hash.update(readFileSync(join(ROOT, "wrangler.toml")));
  return join(ROOT, "node_modules", ".cache", "control-plane", `migrated-${hash.digest("hex").slice(0, 16)}`);
}

/**
 * Makes the migrated state unless it exists (in a directory of its own, then renamed into place,
 * so runs starting together never see half of one); returns its directory. The end-to-end tests'
 * global setup calls it once before any file starts, so files starting together do not each
 * apply the migrations.
 */
export async function ensureMigratedState(): Promise<string> {
  const made = migratedStateDir();
  if (!existsSync(made)) {
    const making = `${made}.${process.pid}-${randomBytes(4).toString("hex")}`;
    mkdirSync(making, { recursive: true });
    await applyLocalMigrations(making);
    try {
      renameSync(making, made);
    } catch {
      // Another run made it first.
      rmSync(making, { recursive: true, force: true });
    }
  }
  return made;
}

/** Gives an empty `persistTo` every migration by copying the migrated state. */
export async function seedMigratedState(persistTo: string): Promise<void> {
  cpSync(await ensureMigratedState(), persistTo, { recursive: true });
}

const isEmptyDir = (path: string) => !existsSync(path) || readdirSync(path).length === 0;

/** Applies migrations (a fresh state gets a migrated copy), starts `wrangler dev` and resolves once the Worker answers. */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  if (!options.config) {
    if (options.persistTo && isEmptyDir(options.persistTo)) await seedMigratedState(options.persistTo);
    else await applyLocalMigrations(options.persistTo);
  }
  const port = options.port ?? (await freePort());
  const inspectorPort = await freePort();
  const args = [
    "dev",
    "--ip", "127.0.0.1",
    "--port", String(port),
    "--inspector-port", String(inspectorPort),
    "--show-interactive-dev-session=false",
    ...(options.testScheduled ? ["--test-scheduled"] : []),
    ...(options.config ? ["--config", options.config] : []),
    ...(options.persistTo ? ["--persist-to", options.persistTo] : []),
    ...Object.entries(options.vars ?? {}).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  const child = spawn(WRANGLER, args, {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  // Keep the output for failure reports; npm start also shows it as it comes.
  const keep = (d: Buffer, show: NodeJS.WriteStream) => {
    output += d;
    if (options.inheritOutput) show.write(d);
    if (options.outputFile) appendFileSync(options.outputFile, d);
  };
  child.stdout.on("data", (d: Buffer) => keep(d, process.stdout));
  child.stderr.on("data", (d: Buffer) => keep(d, process.stderr));
  const url = `http://localhost:${port}`;
  const server: DevServer = {
    url,
    port,
    process: child,
    output: () => output,
    stop: () => stopProcessGroup(child),
  };
  await waitUntilReady(server, 90_000);
  return server;
}

async function waitUntilReady(server: DevServer, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const plain = server.output().replace(/\x1b\[[0-9;]*m/g, "");
    const configError = /Invalid configuration:[\s\S]*?(?=\n\s*at )/.exec(plain);
    // A build error leaves wrangler waiting for the next edit: no answer will come.
    if (configError || /The Workers runtime failed to start|Build failed with \d+ error/.test(plain)) {
      await server.stop();
      throw new Error(configError ? `The Worker refused to start. ${configError[0].replace(/\n\s*\n/g, "\n").trim()}` : `The Worker failed to start:\n${server.output()}`);
    }
    if (server.process.exitCode !== null) {
      throw new Error(`wrangler dev exited with code ${server.process.exitCode}:\n${server.output()}`);
    }
    try {
      // A first connection the starting runtime accepts but never answers must not hold the wait.
      const res = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(5000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await server.stop();
  throw new Error(`wrangler dev did not answer within ${timeoutMs / 1000} s:\n${server.output()}`);
}

/** Stops wrangler and the workerd it started (they share a process group). */
function stopProcessGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return Promise.resolve();
  return new Promise((ok) => {
    const timer = setTimeout(() => {
      try { process.kill(-child.pid!, "SIGKILL"); } catch { /* already gone */ }
    }, 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      ok();
    });
    try { process.kill(-child.pid!, "SIGTERM"); } catch { ok(); }
  });
}
