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
 * About 20 MB of SQL, all of it deterministic so that a local SQLite can build the same database:
 * an INTEGER PRIMARY KEY table and a WITHOUT ROWID one.
 */
const SEED = `CREATE TABLE items (id INTEGER PRIMARY KEY, v INTEGER, r REAL, pad TEXT);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 24000)
INSERT INTO items SELECT x, 9223372036854775807 - x, x / 7.0, printf('%.800c', char(97 + x % 26)) FROM n;
CREATE TABLE tags (k TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 2000) INSERT INTO tags SELECT 'tag ' || x, x FROM n;
CREATE TABLE ticks (n INTEGER PRIMARY KEY);`;

/** The n-th write: numbered (ticks), and an update, a delete, an insert and a rowid change of rows all over the tables. */
function write(n: number): string {
  return `INSERT INTO ticks VALUES (${n});
UPDATE items SET v = v - ${n}, r = r * 3 WHERE id = ${(n * 7919) % 24000 + 1};
DELETE FROM items WHERE id = ${(n * 104729) % 24000 + 1};
INSERT INTO items (v, r, pad) VALUES (${n}, ${n} / 3.0, 'written ' || ${n});
UPDATE OR IGNORE items SET id = id + 100000 WHERE id = ${(n * 31) % 24000 + 1};
UPDATE tags SET k = 'moved ' || k, n = -n WHERE k = 'tag ${(n * 13) % 2000 + 1}';
DELETE FROM tags WHERE k = 'tag ${(n * 17) % 2000 + 1}';`;
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Schema and every table's rows of a local database, sorted, as quote() text (exact for every storage class). */
function contents(db: DatabaseSync) {
  const all = (sql: string) => {
    const statement = db.prepare(sql);
    statement.setReturnArrays(true);
    return statement.all() as unknown as unknown[][];
  };
  const schema = all("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name");
  const rows: Record<string, string[]> = {};
  for (const [type, name] of schema as [string, string][]) {
    if (type !== "table") continue;
    const columns = all(`PRAGMA table_xinfo(${ident(name)})`).map((c) => `quote(${ident(String(c[1]))})`);
    rows[name] = all(`SELECT ${columns.join("||'|'||")} FROM ${ident(name)}`).map((r) => String(r[0])).sort();
  }
  return { schema, rows };
}

describe("writes during a multi-invocation export", () => {
  let worker: Worker;
  const dir = mkdtempSync(join(tmpdir(), "export-writes-"));
  beforeAll(async () => {
    // 256 KiB of SQL per invocation: the export takes many invocations.
    worker = await startWorker({ EXPORT_INVOCATION_BYTES: String(256 * 1024) });
  });
  afterAll(async () => {
    await worker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers a write every 100 ms throughout, and the archive is the database as it was when the dump began", async () => {
    const demo = await seedDemo(worker.url);
    const session = new ConsoleSession(worker.url);
    await session.call("POST", "/console/api/login", { email: DEMO_EMAIL, password: DEMO_PASSWORD });
    await session.sql(demo.databaseId, SEED);

    const url = await startExport(worker.url, demo.token, demo.databaseId);
    const latencies: number[] = [];
    let ready = false;
    const writer = (async () => {
      for (let n = 1; !ready; n++) {
        const started = performance.now();
        await session.sql(demo.databaseId, write(n));
        latencies.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const answer = await pollUntilReady(url, 300_000);
    ready = true;
    await writer;
    expect(answer.status).toBe(200);
    const exportId = /exports\/([0-9a-f-]+)\/download/.exec(url)![1]!;
    const [[steps]] = (await localD1Rows(worker.persistTo, `SELECT step FROM exports WHERE id = '${exportId}'`)) as [[string]];
    expect(Number(steps)).toBeGreaterThanOrEqual(5);

    const { res, body } = await download(url);
    expect(sha256(body)).toBe(res.headers.get("X-Export-SHA256"));
    const archive = join(dir, "a.sql.gz");
    const restoredFile = join(dir, "restored.db");
    writeFileSync(archive, body);
    await run("bash", ["-c", 'set -o pipefail; gunzip -c "$1" | sqlite3 -bail "$2"', "restore", archive, restoredFile]);
    const restored = new DatabaseSync(restoredFile, { readOnly: true });

    // The snapshot is the database after the writes answered before the dump began: a prefix of them.
    const { taken, last } = restored.prepare("SELECT count(*) AS taken, coalesce(max(n), 0) AS last FROM ticks").get() as { taken: number; last: number };
    expect(last).toBe(taken);
    // Writes went on during the export, many of them after the dump began.
    expect(latencies.length - taken).toBeGreaterThanOrEqual(10);

    // The same tables built locally: the seed and the first `taken` writes. (The demo's own tables,
    // which no write touched, come along in the archive too.)
    const expected = new DatabaseSync(":memory:");
    try {
      expected.exec(SEED);
      for (let n = 1; n <= taken; n++) expected.exec(write(n));
      const want = contents(expected);
      const all = contents(restored);
      const mine = Object.keys(want.rows);
      expect({ schema: all.schema.filter((o) => mine.includes(String(o[2]))), rows: Object.fromEntries(mine.map((t) => [t, all.rows[t]])) }).toEqual(want);
      expect(Object.keys(all.rows)).toContain("customers");
      expect(all.schema.filter((o) => String(o[1]).startsWith("_export_snapshot_"))).toEqual([]);
    } finally {
      expected.close();
      restored.close();
    }
    console.log(`writes during the export: ${latencies.length}, slowest ${Math.round(Math.max(...latencies))} ms`);
  }, 400_000);
});
