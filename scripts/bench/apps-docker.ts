/**
 * The Docker CLI side of the apps benchmark, and plain HTTP on loopback: what a person would do by
 * hand with the same repository (`git archive` a checkout, `docker build` with the legacy builder
 * the Worker also drives through the API, `docker run -d -p 127.0.0.1::8080`, wait for the first
 * answer), plus asking the engine which port an app's container was published on.
 */
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Every container and image the CLI side makes carries this label / tag prefix, for cleanup. */
export const BENCH_LABEL = "control-plane-bench.run";
export const BENCH_IMAGE = "control-plane-bench/apps-cli";

/** `docker ...` with the legacy builder, as the Worker's `POST /build` uses; resolves with stdout. */
export async function docker(args: string[]): Promise<string> {
  const { stdout } = await run("docker", args, { env: { ...process.env, DOCKER_BUILDKIT: "0" }, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** The engine's version, or null when the CLI or the daemon is missing. */
export async function dockerVersion(): Promise<string | null> {
  try {
    return (await docker(["version", "--format", "{{.Server.Version}} (API {{.Server.APIVersion}})"])).trim();
  } catch {
    return null;
  }
}

/** One GET on loopback with node:http (so a `Host` can be given); any HTTP answer resolves. */
export function get(url: string, host?: string, timeoutMs = 3000): Promise<{ status: number; body: string }> {
  return new Promise((ok, fail) => {
    const r = request(url, { method: "GET", agent: false, headers: host ? { Host: host } : {}, timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => ok({ status: res.statusCode ?? 0, body }));
      res.on("error", fail);
    });
    r.on("timeout", () => r.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
    r.on("error", fail);
    r.end();
  });
}

/** Polls until `url` gives any HTTP answer (a refused or reset connection is no answer). */
export async function firstAnswer(url: string, timeoutMs: number, intervalMs = 20, host?: string): Promise<{ status: number; body: string }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      return await get(url, host);
    } catch (err) {
      if (performance.now() > deadline) throw new Error(`${url} gave no HTTP answer within ${timeoutMs / 1000} s: ${(err as Error).message}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** What one CLI run took, ms from the start of `git archive`. */
export interface CliRun {
  totalMs: number;
  buildMs: number;
  /** Whether every step after FROM said `Using cache`. */
  cached: boolean;
  status: number;
  body: string;
  /** What `docker build` printed. */
  output: string;
}

/** Instance limits given to the CLI container: the same as the app's plan gets from the Worker. */
export interface Limits {
  memoryBytes: number;
  cpus: number;
}

/**
 * `git archive` of the branch into a fresh directory, `docker build` of it, `docker run -d` with
 * the port published on 127.0.0.1, and polling until the first HTTP answer. Removes the container
 * and, unless `keepTag`, the tag afterwards (a tag kept by the warm-up holds the layer cache).
 */
export async function cliDeploy(options: { repoDir: string; branch: string; workDir: string; tag: string; runId: string; limits: Limits; port: number; keepTag?: boolean }): Promise<CliRun> {
  const context = join(options.workDir, options.tag.replace(/[^A-Za-z0-9_.-]/g, "_"));
  mkdirSync(context, { recursive: true });
  const started = performance.now();
  await run("bash", ["-o", "pipefail", "-c", 'git -C "$1" archive --format=tar "refs/heads/$2" | tar -x -C "$3"', "bash", options.repoDir, options.branch, context]);
  const building = performance.now();
  const output = await docker(["build", "-t", options.tag, context]);
  const buildMs = performance.now() - building;
  const id = (
    await docker([
      "run", "-d",
      "--label", `${BENCH_LABEL}=${options.runId}`,
      "-p", `127.0.0.1::${options.port}`,
      "--memory", String(options.limits.memoryBytes),
      "--memory-swap", String(options.limits.memoryBytes),
      "--cpus", String(options.limits.cpus),
      options.tag,
    ])
  ).trim();
  try {
    const published = (await docker(["port", id, `${options.port}/tcp`])).split("\n").find((l) => l.startsWith("127.0.0.1:"));
    if (!published) throw new Error(`docker port gave no 127.0.0.1 binding for ${id.slice(0, 12)}`);
    const answer = await firstAnswer(`http://${published}/`, 30_000);
    const totalMs = performance.now() - started;
    const steps = output.split("\n").filter((l) => /^Step \d+\/\d+ : /.test(l)).length;
    const usingCache = output.split("\n").filter((l) => l.includes("Using cache")).length;
    return { totalMs, buildMs, cached: steps > 1 && usingCache >= steps - 1, ...answer, output };
  } finally {
    await docker(["rm", "-f", id]).catch(() => undefined);
    if (!options.keepTag) await docker(["rmi", options.tag]).catch(() => undefined);
  }
}

/** Removes whatever the CLI side of run `runId` left: containers by label, images by tag. */
export async function cliCleanup(runId: string): Promise<void> {
  const containers = (await docker(["ps", "-aq", "--filter", `label=${BENCH_LABEL}=${runId}`]).catch(() => "")).split("\n").filter(Boolean);
  if (containers.length > 0) await docker(["rm", "-f", ...containers]).catch(() => undefined);
  const tags = (await docker(["images", "--format", "{{.Repository}}:{{.Tag}}", BENCH_IMAGE]).catch(() => ""))
    .split("\n")
    .filter((t) => t.startsWith(`${BENCH_IMAGE}:${runId}-`));
  if (tags.length > 0) await docker(["rmi", ...tags]).catch(() => undefined);
}

/** A running container of the app (by the Worker's label) and its port published on 127.0.0.1. */
export async function appContainers(engineUrl: string, appId: string): Promise<{ id: string; state: string; hostPort: number | null }[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`control-plane.app_id=${appId}`] }));
  const res = await fetch(`${engineUrl}/containers/json?all=1&filters=${filters}`);
  if (!res.ok) throw new Error(`the engine answered ${res.status} to containers/json`);
  const list = (await res.json()) as { Id: string; State: string; Ports?: { IP?: string; PublicPort?: number }[] }[];
  return list.map((c) => ({
    id: c.Id,
    state: c.State,
    hostPort: c.Ports?.find((p) => p.PublicPort && (p.IP === "127.0.0.1" || p.IP === undefined))?.PublicPort ?? null,
  }));
}
