import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/dev-server";
import { exportIdOf } from "../../src/cli/headers";
import {
  buildClient,
  createAccount,
  fetchArchive,
  restoredCustomers,
  run,
  setExportStatus,
  sha256Of,
  spendAllowance,
  start,
  startExport,
  userEnv,
} from "./cli-helpers";
import { startCutProxy } from "./cut-proxy";
import { type Worker, startWorker } from "./harness";

// README "Downloading exports from scripts", run exactly as written against a real `wrangler dev`:
// the commands are read from README.md, so the README and this test cannot drift apart. The
// variables the README asks the reader to set (EXPORT_API_URL, EXPORT_API_TOKEN, DATABASE_ID, url)
// come from the test.

// A call rate tight enough that a test can spend an account's allowance in a few calls, and slow
// to come back (a call every 3 s), so the next call is still refused when a loaded machine is slow to start it.
const VARS = { PENDING_RETRY_AFTER_SECONDS: "1", RATE_LIMIT_PER_MINUTE: "20", RATE_LIMIT_BURST: "6" };

/** The `sh` code blocks of the README section, in order. */
function readmeBlocks(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("## Downloading exports from scripts");
  if (start === -1) throw new Error('README.md has no section "Downloading exports from scripts"');
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

const blocks = readmeBlocks();
const block = (marker: string): string => {
  const found = blocks.filter((b) => b.includes(marker));
  if (found.length !== 1) throw new Error(`expected one README sh block with "${marker}", found ${found.length}`);
  return found[0]!;
};
const CLIENT = block("npx dbexport-control-plane");
const RECIPE = block("sha256sum");
const RESUME = block("wget");
/** The one line of `text` that starts with `command`. */
const line = (text: string, command: string): string => {
  const found = text.split("\n").filter((l) => l.startsWith(command));
  if (found.length !== 1) throw new Error(`expected one README line starting "${command}", found ${found.length}`);
  return found[0]!;
};

const bash = (script: string, cwd: string, env: Record<string, string>) =>
  run("bash", ["-euo", "pipefail", "-c", script], { cwd, env: userEnv(env) });

describe("README: downloading exports from scripts", () => {
  const dir = mkdtempSync(join(tmpdir(), "cli-readme-"));
  let worker: Worker;

  beforeAll(async () => {
    [worker] = await Promise.all([startWorker(VARS), buildClient()]);
  });
  afterAll(async () => {
    await worker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A new account (its own call-rate allowance) with one database, and the variables the README sets. */
  async function setUp(name: string, fillerRows = 0) {
    const account = await createAccount(worker.url, `${name}@example.com`);
    const databaseId = await account.createDatabase(name, fillerRows);
    const env = { EXPORT_API_URL: worker.url, EXPORT_API_TOKEN: account.token, DATABASE_ID: databaseId };
    return { token: account.token, databaseId, env };
  }

  it("the curl recipe waits out a 429, saves the archive and the checksum matches", async () => {
    const { token, env } = await setUp("readme-curl");
    const cwd = mkdtempSync(join(dir, "recipe-"));
    await spendAllowance(worker.url, token);
    const result = await bash(RECIPE, cwd, env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("The requested URL returned error: 429");
    expect(result.stdout).toBe("export.sql.gz: OK\n");
    const headers = readFileSync(join(cwd, "export.headers"), "utf8");
    const sha = [...headers.matchAll(/^x-export-sha256: ([0-9a-f]{64})\r$/gim)].at(-1)?.[1];
    expect(sha256Of(join(cwd, "export.sql.gz"))).toBe(sha);
    expect(await restoredCustomers(join(cwd, "export.sql.gz"))).toBe(5);
  });

  it("step 2 of the recipe keeps polling through 503 while the export is prepared", async () => {
    const { token, databaseId } = await setUp("readme-pending");
    const cwd = mkdtempSync(join(dir, "pending-"));
    const { url } = await startExport(worker.url, token, databaseId);
    // Locally the queue finishes an export at once; hold this one `running` in D1 for a while.
    const exportId = exportIdOf(url)!;
    await setExportStatus(worker.persistTo, exportId, "running");
    const polling = start("bash", ["-euo", "pipefail", "-c", RECIPE.slice(RECIPE.indexOf("# 2."))], { cwd, env: userEnv({ url }) });
    try {
      await polling.stderrContains("The requested URL returned error: 503");
      await setExportStatus(worker.persistTo, exportId, "ready");
    } finally {
      // curl still polling 30 s on is stuck: end it, so the test reports instead of hanging.
      setTimeout(polling.kill, 30_000).unref();
    }
    const result = await polling.result;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("export.sql.gz: OK\n");
    const statuses = [...readFileSync(join(cwd, "export.headers"), "utf8").matchAll(/^HTTP\/1\.1 (\d+)/gm)].map((m) => m[1]);
    expect(statuses.at(0)).toBe("503");
    expect(statuses.at(-1)).toBe("200");
    expect(await restoredCustomers(join(cwd, "export.sql.gz"))).toBe(5);
  });

  it("shows why --fail matters: without it curl saves the error JSON as the archive and exits 0", async () => {
    const { token, databaseId } = await setUp("readme-no-fail");
    const cwd = mkdtempSync(join(dir, "no-fail-"));
    const { url } = await startExport(worker.url, token, databaseId);
    const refused = url.replace(/sig=[^&]+/, "sig=not-the-signature");
    const saved = await bash('curl --silent --output export.sql.gz "$url"', cwd, { url: refused });
    expect(saved.code).toBe(0);
    expect(JSON.parse(readFileSync(join(cwd, "export.sql.gz"), "utf8"))).toMatchObject({ success: false, code: "SIGNED_URL_INVALID" });
    rmSync(join(cwd, "export.sql.gz"));
    const failed = await bash('curl --fail --silent --output export.sql.gz "$url"', cwd, { url: refused });
    expect(failed.code).toBe(22);
    expect(readdirSync(cwd)).toEqual([]);
  });

  /** A ready archive behind the cutting proxy, and a file holding only its first bytes. */
  async function cutDownload(name: string) {
    const proxy = await startCutProxy(worker.port);
    // About 1 MB of archive, cut after 256 KiB.
    const { token, databaseId } = await setUp(name, 20_000);
    const { url } = await startExport(proxy.url, token, databaseId);
    const archive = await fetchArchive(url);
    const cwd = mkdtempSync(join(dir, `${name}-`));
    proxy.arm(256 * 1024);
    const cut = await bash('curl --fail --silent --output export.sql.gz "$url"', cwd, { url });
    expect(cut.code).toBe(18);
    expect(proxy.cuts).toBe(1);
    expect(statSync(join(cwd, "export.sql.gz")).size).toBeLessThan(archive.bytes.length);
    return { proxy, url, archive, cwd };
  }

  it("curl -C - resumes a download cut short; on a complete file it exits 22 and leaves it alone", async () => {
    const { proxy, url, archive, cwd } = await cutDownload("readme-curl-resume");
    try {
      const command = line(RESUME, "curl ");
      expect((await bash(command, cwd, { url })).code).toBe(0);
      expect(sha256Of(join(cwd, "export.sql.gz"))).toBe(archive.sha256);
      const again = await bash(command, cwd, { url });
      expect(again.code).toBe(22);
      expect(sha256Of(join(cwd, "export.sql.gz"))).toBe(archive.sha256);
    } finally {
      await proxy.close();
    }
  });

  it("wget -c resumes a download cut short and leaves a complete file alone", async () => {
    const { proxy, url, archive, cwd } = await cutDownload("readme-wget-resume");
    try {
      const command = line(RESUME, "wget ");
      const resumed = await bash(command, cwd, { url });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(sha256Of(join(cwd, "export.sql.gz"))).toBe(archive.sha256);
      expect((await bash(command, cwd, { url })).code).toBe(0);
      expect(sha256Of(join(cwd, "export.sql.gz"))).toBe(archive.sha256);
    } finally {
      await proxy.close();
    }
  });

  it("npx <package> export runs the installed bin on the system Node", async () => {
    const project = mkdtempSync(join(dir, "project-"));
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "backup-scripts", private: true }));
    await promisify(execFile)("npm", ["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", ROOT], {
      cwd: project,
      env: userEnv({}),
    });
    const { token, env } = await setUp("readme-npx");
    const result = await bash(line(CLIENT, "npx "), project, { ...env, EXPORT_STATE_DIR: join(project, ".state") });
    expect(result.code, result.stderr).toBe(0);
    const saved = /^saved (\S+) \(\d+ bytes, sha256 ([0-9a-f]{64})\)$/.exec(result.stdout.trim());
    expect(saved?.[1]).toMatch(new RegExp(`^${project}/${env.DATABASE_ID}-[0-9a-f-]{36}\\.sql\\.gz$`));
    expect(sha256Of(saved![1]!)).toBe(saved![2]);
    expect(result.stdout + result.stderr).not.toContain(token);
  });

  it("npm run export inside the repository prints one JSON line", async () => {
    const { databaseId, env } = await setUp("readme-npm-run");
    const stateDir = mkdtempSync(join(dir, "npm-run-state-"));
    const result = await bash(line(CLIENT, "npm run "), ROOT, { ...env, EXPORT_STATE_DIR: stateDir });
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    try {
      expect(summary).toMatchObject({ ok: true, database_id: databaseId, file: join(ROOT, `${databaseId}-${summary.export_id}.sql.gz`) });
      expect(sha256Of(summary.file)).toBe(summary.sha256);
    } finally {
      rmSync(summary.file, { force: true });
    }
  });
});
