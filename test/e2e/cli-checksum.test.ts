import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { type IncomingMessage, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../src/cli/exit-codes";
import { main } from "../../src/cli/main";

// Checksum verification (issue 5) against a test double: the real Worker always sends the right
// X-Export-SHA256, so a server that sends a wrong or no checksum is the one place a fake server is right.

const DB = "0b8f1a4e-3c2d-4e5f-8a9b-0c1d2e3f4a5b";
const EID = "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9";
const TOKEN = "dbx_test_double_token_0123456789";
const ARCHIVE = Buffer.from("not really gzip, but bytes the client must verify");
const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

/**
 * Answers start with a link to itself, then serves ARCHIVE (one byte range too) with `hash` as its
 * X-Export-SHA256 (null: none); records the download requests.
 */
async function testDouble(hash: string | null) {
  const seen = { downloads: [] as IncomingMessage["headers"][] };
  const server = createServer((req, res) => {
    if (req.method === "POST") {
      res.writeHead(200, { "Content-Type": "application/json" });
      return void res.end(JSON.stringify({ url: link, expires_at: new Date(Date.now() + 600_000).toISOString() }));
    }
    seen.downloads.push(req.headers);
    const start = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? "")?.[1] ?? 0);
    const body = ARCHIVE.subarray(start);
    res.writeHead(start > 0 ? 206 : 200, {
      "Content-Type": "application/gzip",
      "Content-Length": body.length,
      "Content-Disposition": `attachment; filename="${DB}-${EID}.sql.gz"`,
      ...(start > 0 ? { "Content-Range": `bytes ${start}-${ARCHIVE.length - 1}/${ARCHIVE.length}` } : {}),
      ...(hash === null ? {} : { "X-Export-SHA256": hash }),
    });
    res.end(body);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const link = `${base}/api/v1/dbs/${DB}/exports/${EID}/download?exp=1900000000&sig=double-sig`;
  return { base, seen, close: () => new Promise((ok) => server.close(ok)) };
}

const dir = mkdtempSync(join(tmpdir(), "cli-double-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the client in-process against `double` in a fresh directory. */
async function runAgainst(double: { base: string; close: () => Promise<unknown> }, extra: string[] = [], prepare?: (cwd: string) => void) {
  const cwd = mkdtempSync(join(dir, "run-"));
  prepare?.(cwd);
  let stdout = "";
  let stderr = "";
  try {
    const code = await main({
      argv: ["export", DB, "--json", ...extra],
      env: { EXPORT_API_URL: double.base, EXPORT_API_TOKEN: TOKEN, EXPORT_STATE_DIR: join(cwd, ".state") },
      stdout: { write: (t: string) => (stdout += t) },
      stderr: { write: (t: string) => (stderr += t) },
      cwd,
      home: cwd,
      fetch: globalThis.fetch,
      sleep: (ms) => sleep(ms),
      now: Date.now,
    });
    return { code, stdout, stderr, cwd, files: readdirSync(cwd).filter((f) => f !== ".state") };
  } finally {
    await double.close();
  }
}

describe("checksum verification against a test double", () => {
  it("fails with the checksum exit code, names both hashes and leaves neither file nor part file", async () => {
    const result = await runAgainst(await testDouble(sha256("some other archive")));
    expect(result.code).toBe(ExitCode.CHECKSUM);
    expect(result.stderr).toContain(`checksum mismatch: X-Export-SHA256 is ${sha256("some other archive")} but the saved bytes hash to ${sha256(ARCHIVE)}; the part file was deleted`);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, exit_code: ExitCode.CHECKSUM });
    expect(result.files).toEqual([]);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
    expect(result.stdout + result.stderr).not.toContain("double-sig");
  });

  it("gives a part file left by an earlier run one fresh download before failing", async () => {
    const double = await testDouble(sha256("some other archive"));
    const result = await runAgainst(double, ["--output", "out.sql.gz"], (cwd) => writeFileSync(join(cwd, "out.sql.gz.part"), "stale bytes"));
    expect(result.code).toBe(ExitCode.CHECKSUM);
    expect(double.seen.downloads.map((h) => h.range)).toEqual(["bytes=11-", undefined]);
    expect(result.stderr).toContain("the part file left by an earlier run does not match this archive; starting again from the beginning");
    expect(result.files).toEqual([]);
  });

  it("refuses an archive that comes without X-Export-SHA256", async () => {
    const result = await runAgainst(await testDouble(null));
    expect(result.code).toBe(ExitCode.CHECKSUM);
    expect(result.stderr).toContain("no valid X-Export-SHA256");
    expect(result.files).toEqual([]);
  });

  it("saves a matching archive under the server's name and sends no token with the download", async () => {
    const double = await testDouble(sha256(ARCHIVE));
    const result = await runAgainst(double);
    expect(result.code).toBe(ExitCode.OK);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true, database_id: DB, export_id: EID, file: join(result.cwd, `${DB}-${EID}.sql.gz`), bytes: ARCHIVE.length, sha256: sha256(ARCHIVE),
    });
    expect(double.seen.downloads.every((h) => h.authorization === undefined)).toBe(true);
    expect(existsSync(join(result.cwd, ".state", `${DB}.json`))).toBe(false);
  });
});
