import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../src/cli/exit-codes";
import { exportIdOf } from "../../src/cli/headers";
import { LinkStore } from "../../src/cli/state";
import {
  type Run,
  type TestAccount,
  buildClient,
  createAccount,
  restoredCustomers,
  runClient,
  setExportStatus,
  sha256Of,
  spendAllowance,
  startClient,
  startExport,
} from "./cli-helpers";
import { startCutProxy } from "./cut-proxy";
import { type Worker, startWorker } from "./harness";

// The client (issue 5) end to end: the built bundle, run by the system Node as an installed bin
// runs, against a real `wrangler dev`. Each test has its own account and database, so one test's
// cooldown or call rate never holds up another.

const VARS = {
  EXPORT_COOLDOWN_SECONDS: "8",
  PENDING_RETRY_AFTER_SECONDS: "1",
  IN_FLIGHT_RETRY_AFTER_SECONDS: "1",
  // Tight enough that a test can spend an account's allowance in a few calls, and slow to come back
  // (a call every 3 s), so the next call is still refused when a loaded machine is slow to start it.
  RATE_LIMIT_PER_MINUTE: "20",
  RATE_LIMIT_BURST: "6",
};

describe("dbexport against a real Worker", () => {
  const dir = mkdtempSync(join(tmpdir(), "cli-client-"));
  let worker: Worker;
  let bundle: string;

  beforeAll(async () => {
    [worker, bundle] = await Promise.all([startWorker(VARS), buildClient(join(dir, "dbexport.mjs"))]);
  });
  afterAll(async () => {
    await worker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A new account with one database, a working directory, and the environment a user sets. */
  async function setUp(name: string, baseUrl = worker.url, fillerRows = 0) {
    const account = await createAccount(worker.url, `${name}@example.com`);
    const databaseId = await account.createDatabase(name, fillerRows);
    const cwd = mkdtempSync(join(dir, `${name}-`));
    const stateDir = join(dir, `${name}-state`);
    const env = { EXPORT_API_URL: baseUrl, EXPORT_API_TOKEN: account.token, EXPORT_STATE_DIR: stateDir };
    return { account, databaseId, cwd, stateDir, env };
  }

  /** Checks a successful `--json` run: one summary line, a verified archive that restores, no secrets. */
  async function expectSaved(result: Run, account: TestAccount, databaseId: string, cwd: string) {
    expect(result.code, result.stderr).toBe(ExitCode.OK);
    expect(result.stdout.trim().split("\n")).toHaveLength(1);
    const summary = JSON.parse(result.stdout) as { file: string; export_id: string; bytes: number; sha256: string };
    expect(summary).toMatchObject({ ok: true, database_id: databaseId, file: join(cwd, `${databaseId}-${summary.export_id}.sql.gz`) });
    expect(sha256Of(summary.file)).toBe(summary.sha256);
    expect(statSync(summary.file).size).toBe(summary.bytes);
    expect(existsSync(`${summary.file}.part`)).toBe(false);
    expect(await restoredCustomers(summary.file)).toBe(5);
    expect(result.stdout + result.stderr).not.toContain(account.token);
    expect(result.stdout + result.stderr).not.toContain("sig=");
    return summary;
  }

  describe("one database through start, cooldown and a new export", () => {
    let ctx: Awaited<ReturnType<typeof setUp>>;
    beforeAll(async () => {
      ctx = await setUp("cli-flow");
    });

    it("starts the export, saves the verified archive and prints only the JSON summary on stdout", async () => {
      const result = await runClient(bundle, ["export", ctx.databaseId, "--json"], ctx);
      const summary = await expectSaved(result, ctx.account, ctx.databaseId, ctx.cwd);
      expect(result.stderr).toContain(`export ${summary.export_id} started; its link is valid until `);
      expect(result.stderr).not.toContain("[#");
      expect(existsSync(join(ctx.stateDir, `${ctx.databaseId}.json`))).toBe(false);
    });

    it("exits 8 on cooldown_active with --no-wait, naming the wait and writing nothing", async () => {
      const cwd = mkdtempSync(join(dir, "no-wait-"));
      const result = await runClient(bundle, ["export", ctx.databaseId, "--no-wait", "--json", "--quiet"], { ...ctx, cwd });
      expect(result.code).toBe(ExitCode.NOT_NOW);
      expect(result.stderr).toMatch(/^dbexport: database \S+ was exported recently \(cooldown_active\); a new export can start in \d+ s\n$/);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, exit_code: ExitCode.NOT_NOW, code: "cooldown_active" });
      expect(readdirSync(cwd)).toEqual([]);
    });

    it("waits out cooldown_active in full, then starts a new export", async () => {
      const started = Date.now();
      const result = await runClient(bundle, ["export", ctx.databaseId, "--json"], ctx);
      await expectSaved(result, ctx.account, ctx.databaseId, ctx.cwd);
      const wait = Number(/cooldown active, waiting (\d+) s \(the whole cooldown\) before starting a new export/.exec(result.stderr)?.[1]);
      expect(wait).toBeGreaterThan(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(wait * 1000);
    });
  });

  describe("an export in flight (held `running` in D1: locally the queue finishes one at once)", () => {
    it("polls the link it stored when it started that export, through 503, until the archive is ready", async () => {
      const { account, databaseId, cwd, stateDir, env } = await setUp("cli-in-flight");
      // An earlier run started the export and stored its link, then stopped.
      const earlier = await startExport(worker.url, account.token, databaseId);
      new LinkStore(stateDir).save(databaseId, { url: earlier.url, expiresAt: earlier.expires_at });
      const exportId = exportIdOf(earlier.url)!;
      await setExportStatus(worker.persistTo, exportId, "running");
      const client = startClient(bundle, ["export", databaseId, "--json"], { cwd, env });
      try {
        await client.stderrContains("export running, retrying in 1 s");
        await setExportStatus(worker.persistTo, exportId, "ready");
      } finally {
        // A client still polling 30 s on is stuck: end it, so the test reports instead of hanging.
        setTimeout(client.kill, 30_000).unref();
      }
      const result = await client.result;
      const summary = await expectSaved(result, account, databaseId, cwd);
      expect(result.stderr).toMatch(
        /^an export is already running \(export_in_flight\); polling the link stored when it was started\n(export running, retrying in 1 s\n)+$/,
      );
      expect(summary.export_id).toBe(exportId);
    });

    it("without a stored link, says so and waits for it to end before starting anew", async () => {
      const { account, databaseId, cwd, env } = await setUp("cli-elsewhere");
      const elsewhere = await startExport(worker.url, account.token, databaseId);
      const exportId = exportIdOf(elsewhere.url)!;
      await setExportStatus(worker.persistTo, exportId, "running");
      const client = startClient(bundle, ["export", databaseId, "--json"], { cwd, env });
      try {
        await client.stderrContains("(export_in_flight) and no link for it is stored here; waiting 1 s for it to end before starting anew");
        await setExportStatus(worker.persistTo, exportId, "ready");
      } finally {
        // A client still polling 30 s on is stuck: end it, so the test reports instead of hanging.
        setTimeout(client.kill, 30_000).unref();
      }
      const result = await client.result;
      const summary = await expectSaved(result, account, databaseId, cwd);
      // Once that export has ended, what is left of the cooldown it started is waited out, if any.
      expect(result.stderr).toMatch(/export_in_flight[^]*export \S+ started; its link is valid until /);
      expect(summary.export_id).not.toBe(exportId);
    });
  });

  it("waits Retry-After on 429 RATE_LIMIT_EXCEEDED, then goes on", async () => {
    const { account, databaseId, cwd, env } = await setUp("cli-rate");
    await spendAllowance(worker.url, account.token);
    const result = await runClient(bundle, ["export", databaseId, "--json"], { cwd, env });
    await expectSaved(result, account, databaseId, cwd);
    expect(result.stderr).toMatch(/^rate limited \(RATE_LIMIT_EXCEEDED\), retrying in \d+ s$/m);
  });

  it("resumes with Range after the connection drops mid-download", async () => {
    const proxy = await startCutProxy(worker.port);
    try {
      // About 1 MB of archive, cut after 256 KiB.
      const { account, databaseId, cwd, env } = await setUp("cli-drop", proxy.url, 20_000);
      proxy.arm(256 * 1024);
      const result = await runClient(bundle, ["export", databaseId, "--json"], { cwd, env });
      await expectSaved(result, account, databaseId, cwd);
      expect(proxy.cuts).toBe(1);
      const lostAt = Number(/connection lost at byte (\d+) \(.+\); resuming/.exec(result.stderr)?.[1]);
      expect(lostAt).toBeGreaterThan(0);
      expect(lostAt).toBeLessThanOrEqual(256 * 1024);
    } finally {
      await proxy.close();
    }
  });

  it("starts again from zero on 416 when the part file is longer than the archive", async () => {
    const { databaseId, cwd, env } = await setUp("cli-416");
    writeFileSync(join(cwd, "backup.sql.gz.part"), Buffer.alloc(256 * 1024, 7));
    const result = await runClient(bundle, ["export", databaseId, "--output", "backup.sql.gz"], { cwd, env });
    expect(result.code, result.stderr).toBe(ExitCode.OK);
    expect(result.stderr).toContain("the part file is longer than the archive (416); starting again from the beginning");
    expect(result.stdout).toMatch(/^saved .*backup\.sql\.gz \(\d+ bytes, sha256 [0-9a-f]{64}\)\n$/);
    expect(await restoredCustomers(join(cwd, "backup.sql.gz"))).toBe(5);
    expect(existsSync(join(cwd, "backup.sql.gz.part"))).toBe(false);
  });

  it("downloads afresh when a part file left by an earlier run belongs to another archive", async () => {
    const { databaseId, cwd, env } = await setUp("cli-foreign");
    writeFileSync(join(cwd, "backup.sql.gz.part"), "forty bytes of some other export's gzip.");
    const result = await runClient(bundle, ["export", databaseId, "--output", "backup.sql.gz"], { cwd, env });
    expect(result.code, result.stderr).toBe(ExitCode.OK);
    expect(result.stderr).toContain("the part file left by an earlier run does not match this archive; starting again from the beginning");
    expect(await restoredCustomers(join(cwd, "backup.sql.gz"))).toBe(5);
  });

  it("exits 3 for a refused token and 4 for a database the token cannot see", async () => {
    const { databaseId, cwd, env } = await setUp("cli-refused");
    const refused = await runClient(bundle, ["export", databaseId], { cwd, env: { ...env, EXPORT_API_TOKEN: "dbx_not_a_real_token" } });
    expect(refused.code).toBe(ExitCode.AUTH);
    expect(refused.stderr).toMatch(/^dbexport: the API token was refused \(UNAUTHORIZED\); check EXPORT_API_TOKEN\n$/m);
    expect(refused.stderr).not.toContain("dbx_not_a_real_token");
    const other = await createAccount(worker.url, "cli-other@example.com");
    const hidden = await runClient(bundle, ["export", databaseId], { cwd, env: { ...env, EXPORT_API_TOKEN: other.token } });
    expect(hidden.code).toBe(ExitCode.NOT_FOUND);
    expect(hidden.stderr).toContain(`database ${databaseId} was not found for this token (NOT_FOUND)`);
    expect(readdirSync(cwd)).toEqual([]);
  });
});
