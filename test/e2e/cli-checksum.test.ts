import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { type IncomingMessage, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../../src/cli/exit-codes";
import { main } from "../../src/cli/main";

// Checksum mismatch detection (issue 5) against a test double: the real Worker always sends the
// right X-Export-SHA256, so a server that lies about it is the one place a fake server is right.

const DB = "0b8f1a4e-3c2d-4e5f-8a9b-0c1d2e3f4a5b";
const EID = "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9";
const TOKEN = "dbx_test_double_token_0123456789";
const ARCHIVE = Buffer.from("not really gzip, but bytes the client must verify");
const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

/** Answers start with a link to itself, then serves ARCHIVE (one byte range too) with `hashHeader` as its checksum. */
function testDouble(hashHeader: string | undefined) {
  const downloads: IncomingMessage["headers"][] = [];
  const server: Server = createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.method === "POST") {
      res.writeHead(200, { "Content-Type": "application/json" });
      const url = `${base}/api/v1/dbs/${DB}/exports/${EID}/download?exp=1900000000&sig=double-sig`;
      return void res.end(JSON.stringify({ url, expires_at: new Date(Date.now() + 600_000).toISOString() }));
    }
    downloads.push(req.headers);
    const start = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? "")?.[1] ?? 0);
    const body = ARCHIVE.subarray(start);
    res.writeHead(start > 0 ? 206 : 200, {
      "Content-Type": "application/gzip",
      "Content-Length": body.length,
      "Content-Disposition": `attachment; filename="${DB}-${EID}.sql.gz"`,
      ...(start > 0 ? { "Content-Range": `bytes ${start}-${ARCHIVE.length - 1}/${ARCHIVE.length}` } : {}),
      ...(hashHeader === undefined ? {} : { "X-Export-SHA256": hashHeader }),
    });
    res.end(body);
  });
  return { server, downloads };
}

async function runAgainst(server: Server, cwd: string, extra: string[] = []) {
  let stdout = "";
  let stderr = "";
  const code = await main({
    argv: ["export", DB, "--json", ...extra],
    env: { EXPORT_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, EXPORT_API_TOKEN: TOKEN, EXPORT_STATE_DIR: join(cwd, ".state") },
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    cwd,
    home: cwd,
    fetch: globalThis.fetch,
    sleep: (ms) => sleep(ms),
    now: Date.now,
  });
  return { code, stdout, stderr };
}

describe("checksum verification against a test double", () => {
  const dir = mkdtempSync(join(tmpdir(), "cli-checksum-"));
  const wrong = testDouble(sha256("some other archive"));
  const missing = testDouble(undefined);
  const right = testDouble(sha256(ARCHIVE));
  const servers = [wrong.server, missing.server, right.server];
  beforeAll(async () => {
    await Promise.all(servers.map((s) => new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok))));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));
    rmSync(dir, { recursive: true, force: true });
  });

  it("fails with the checksum exit code, names both hashes and leaves neither file nor part file", async () => {
    const cwd = mkdtempSync(join(dir, "wrong-"));
    const result = await runAgainst(wrong.server, cwd);
    expect(result.code).toBe(ExitCode.CHECKSUM);
    expect(result.stderr).toContain(`checksum mismatch: X-Export-SHA256 is ${sha256("some other archive")} but the saved bytes hash to ${sha256(ARCHIVE)}; the part file was deleted`);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, exit_code: ExitCode.CHECKSUM });
    expect(readdirSync(cwd).filter((f) => f !== ".state")).toEqual([]);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
    expect(result.stdout + result.stderr).not.toContain("double-sig");
  });

  it("gives a part file left by an earlier run one fresh download before failing", async () => {
    const cwd = mkdtempSync(join(dir, "foreign-"));
    const before = wrong.downloads.length;
    writeFileSync(join(cwd, "out.sql.gz.part"), "stale bytes");
    const result = await runAgainst(wrong.server, cwd, ["--output", "out.sql.gz"]);
    expect(result.code).toBe(ExitCode.CHECKSUM);
    const requests = wrong.downloads.slice(before);
    expect(requests.map((h) => h.range)).toEqual(["bytes=11-", undefined]);
    expect(result.stderr).toContain("the part file left by an earlier run does not match this archive; starting again from the beginning");
    expect(existsSync(join(cwd, "out.sql.gz.part"))).toBe(false);
    expect(existsSync(join(cwd, "out.sql.gz"))).toBe(false);
  });

  it("refuses an archive that comes without X-Export-SHA256", async () => {
    const cwd = mkdtempSync(join(dir, "missing-"));
    const result = await runAgainst(missing.server, cwd);
    expect(result.code).toBe(ExitCode.CHECKSUM);
    expect(result.stderr).toContain("no valid X-Export-SHA256");
    expect(readdirSync(cwd).filter((f) => f !== ".state")).toEqual([]);
  });

  it("saves a matching archive under the server's name and sends no token with the download", async () => {
    const cwd = mkdtempSync(join(dir, "right-"));
    const result = await runAgainst(right.server, cwd);
    expect(result.code).toBe(ExitCode.OK);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true, database_id: DB, export_id: EID, file: join(cwd, `${DB}-${EID}.sql.gz`), bytes: ARCHIVE.length, sha256: sha256(ARCHIVE),
    });
    expect(right.downloads.every((h) => h.authorization === undefined)).toBe(true);
    expect(existsSync(join(cwd, ".state", `${DB}.json`))).toBe(false);
  });
});
