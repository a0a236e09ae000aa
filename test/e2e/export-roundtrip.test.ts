import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_EMAIL, DEMO_PASSWORD, seedDemo } from "../../scripts/lib/seed";
import { ConsoleSession, download, pollUntilReady, sha256, startExport } from "./export-helpers";
import { startWorker, type Worker } from "./harness";

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

/** Schema objects and every table's rows, sorted, through `query` (one side or the other). */
async function contents(query: (sql: string) => Promise<unknown[][]>) {
  const schema = await query(SCHEMA);
  const rows: Record<string, string[]> = {};
  for (const [type, name] of schema as [string, string][]) {
    if (type !== "table") continue;
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
