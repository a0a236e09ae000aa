import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_EMAIL, DEMO_PASSWORD, seedDemo } from "../../scripts/lib/seed";
import { ConsoleSession, download, pollUntilReady, sha256, startExport } from "./export-helpers";
import { localD1Rows, startWorker, type Worker } from "./harness";

const run = promisify(execFile);

/**
 * A value in comparable form, the same on both sides: a REAL as the exact double (JSON carries it
 * bit for bit from the Worker; node:sqlite reads it as a JS number), anything else as quote() text,
 * which keeps 64-bit INTEGERs, TEXT and BLOBs exact.
 */
const comparable = (column: string) => `CASE typeof(${column}) WHEN 'real' THEN ${column} ELSE quote(${column}) END`;
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** The user's objects: the platform's own (`_cf_*`, and the local runtime's name table) are not exported. */
const SCHEMA =
  "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT GLOB '_cf_*' AND name != '__miniflare_do_name' ORDER BY type, name";

/** Schema objects and every table's rows (but `skip`'s), sorted, through `query` (one side or the other). */
async function contents(query: (sql: string) => Promise<unknown[][]>, skip: string[] = []) {
  const schema = await query(SCHEMA);
  const rows: Record<string, string[]> = {};
  for (const [type, name] of schema as [string, string][]) {
    if (type !== "table" || skip.includes(name)) continue;
    const columns = (await query(`PRAGMA table_xinfo(${ident(name)})`)).filter((c) => c[6] !== 1).map((c) => ident(String(c[1])));
    const selected = await query(`SELECT ${columns.map((c, i) => `${comparable(c)} AS c${i}`).join(", ")} FROM ${ident(name)}`);
    rows[name] = selected.map((row) => JSON.stringify(row)).sort();
  }
  return { schema, rows };
}

describe("export round trip through wrangler dev and the sqlite3 CLI", () => {
  let worker: Worker;
  const dir = mkdtempSync(join(tmpdir(), "export-roundtrip-"));
  beforeAll(async () => {
    worker = await startWorker();
  });
  afterAll(async () => {
    await worker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("restores the seeded sample database with every row and schema object intact", async () => {
    const demo = await seedDemo(worker.url);
    const session = new ConsoleSession(worker.url);
    await session.call("POST", "/console/api/login", { email: DEMO_EMAIL, password: DEMO_PASSWORD });
    // REALs whose shortest decimal form sqlite3 3.40 (Debian 12's) reads one unit in the last place
    // off, and hundreds more of the same kind as the benchmark's rows.
    await session.sql(
      demo.databaseId,
      `CREATE TABLE reals (r REAL);
       INSERT INTO reals VALUES (5822.3216635279), (-5822.3216635279), (0.30000000000000004), (2.2250738585072014e-308), (4.9406564584124654e-324), (-0.0);
       WITH RECURSIVE n(i, x) AS (SELECT 1, 12345 UNION ALL SELECT i + 1, x * 48271 % 2147483647 FROM n WHERE i < 900)
       INSERT INTO reals SELECT x * 10000.0 / 2147483647 FROM n;`,
    );
    const url = await startExport(worker.url, demo.token, demo.databaseId);
    expect((await pollUntilReady(url)).status).toBe(200);

    const { res, body } = await download(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/gzip");
    expect(sha256(body)).toBe(res.headers.get("X-Export-SHA256"));

    const archive = join(dir, "a.sql.gz");
    const restored = join(dir, "restored.db");
    writeFileSync(archive, body);
    await run("bash", ["-c", 'set -o pipefail; gunzip -c "$1" | sqlite3 -bail "$2"', "restore", archive, restored]);
    expect((await run("sqlite3", [restored, "PRAGMA integrity_check"])).stdout.trim()).toBe("ok");
    expect((await run("sqlite3", [restored, "SELECT count(*) FROM sqlite_schema WHERE name GLOB '*miniflare*'"])).stdout.trim()).toBe("0");

    const source = await contents((sql) => session.sql(demo.databaseId, sql));

    const db = new DatabaseSync(restored, { readOnly: true });
    try {
      const copy = await contents(async (sql) => {
        const statement = db.prepare(sql);
        statement.setReturnArrays(true);
        return statement.all() as unknown as unknown[][];
      });
      expect(copy.schema).toEqual(source.schema);
      expect(copy.rows["reals"]!.filter((r) => !source.rows["reals"]!.includes(r))).toEqual([]);
      expect(copy.rows).toEqual(source.rows);
    } finally {
      db.close();
    }
    // The sample's edges made it: 64-bit extremes, full-precision REALs, and a trigger that did not fire twice.
    expect(source.rows["customers"]!.join("\n")).toContain("9223372036854775807");
    expect(source.rows["customers"]!.join("\n")).toContain("5e-324");
    expect(source.rows["reals"]).toHaveLength(906);
    expect(source.rows["audit_log"]).toHaveLength(source.rows["customers"]!.length);
  });
});

describe("an export over several queue invocations (EXPORT_INVOCATION_BYTES set low)", () => {
  let worker: Worker;
  const dir = mkdtempSync(join(tmpdir(), "export-resume-"));
  beforeAll(async () => {
    // 256 KiB of SQL per invocation: each invocation dumps a few pieces and hands on.
    worker = await startWorker({ EXPORT_INVOCATION_BYTES: String(256 * 1024) });
  });
  afterAll(async () => {
    await worker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("restores with sqlite3 row for row, and the download's X-Export-SHA256 is the archive's", async () => {
    const demo = await seedDemo(worker.url);
    const session = new ConsoleSession(worker.url);
    await session.call("POST", "/console/api/login", { email: DEMO_EMAIL, password: DEMO_PASSWORD });
    // About 5 MB of SQL: random bytes (hex in the dump), and text rows in a WITHOUT ROWID table.
    await session.sql(
      demo.databaseId,
      `CREATE TABLE noise (id INTEGER PRIMARY KEY, bytes BLOB);
       WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 160) INSERT INTO noise SELECT x, randomblob(16384) FROM n;
       CREATE TABLE lines (k TEXT PRIMARY KEY, v REAL) WITHOUT ROWID;
       WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 900) INSERT INTO lines SELECT 'line ' || x || ' it''s', x / 7.0 FROM n;`,
    );
    const url = await startExport(worker.url, demo.token, demo.databaseId);
    expect((await pollUntilReady(url, 300_000)).status).toBe(200);
    const exportId = /exports\/([0-9a-f-]+)\/download/.exec(url)![1]!;
    const [[steps]] = (await localD1Rows(worker.persistTo, `SELECT step FROM exports WHERE id = '${exportId}'`)) as [[string]];
    expect(Number(steps)).toBeGreaterThanOrEqual(5);

    const { res, body } = await download(url);
    expect(res.status).toBe(200);
    expect(sha256(body)).toBe(res.headers.get("X-Export-SHA256"));

    const archive = join(dir, "a.sql.gz");
    const restored = join(dir, "restored.db");
    writeFileSync(archive, body);
    // gunzip reads a file of several gzip members (one per invocation) as one stream, as RFC 1952 allows.
    await run("bash", ["-c", 'set -o pipefail; gunzip -t "$1" && gunzip -c "$1" | sqlite3 -bail "$2"', "restore", archive, restored]);
    expect((await run("sqlite3", [restored, "PRAGMA integrity_check"])).stdout.trim()).toBe("ok");

    // The console answers at most 1000 rows and about 1 MB per statement: the noise is compared a page at a time.
    const source = await contents((sql) => session.sql(demo.databaseId, sql), ["noise"]);
    const noisePage = (after: number) => `SELECT id, quote(bytes) FROM noise WHERE id > ${after} ORDER BY id LIMIT 20`;
    const db = new DatabaseSync(restored, { readOnly: true });
    try {
      const local = async (sql: string) => {
        const statement = db.prepare(sql);
        statement.setReturnArrays(true);
        return statement.all() as unknown as unknown[][];
      };
      const copy = await contents(local, ["noise"]);
      expect(copy.schema).toEqual(source.schema);
      expect(copy.rows).toEqual(source.rows);
      for (let after = 0; after < 160; after += 20) expect(await local(noisePage(after))).toEqual(await session.sql(demo.databaseId, noisePage(after)));
      expect(await local("SELECT count(*) FROM noise")).toEqual([[160]]);
    } finally {
      db.close();
    }
    expect(source.rows["lines"]).toHaveLength(900);
  }, 360_000);
});
