/**
 * The native side of the export comparison: a `sqlite3` file holding the same rows as the managed
 * database, the pipeline `sqlite3 db .dump | gzip -6 | sha256sum`, and the round-trip check that a
 * Worker archive restores to exactly those rows.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { promisify } from "node:util";
import { type Recipe, mixedRecipe } from "./dataset";

const run = promisify(execFile);

/** Command-line tools the bench drives, and the Debian package of each. */
const TOOLS: Record<string, string> = { sqlite3: "sqlite3", nginx: "nginx", curl: "curl", gzip: "gzip", sha256sum: "coreutils", taskset: "util-linux" };

/** The tools missing from PATH (nginx is also looked for in /usr/sbin), with an install hint. */
export async function missingTools(): Promise<string | null> {
  const missing: string[] = [];
  for (const tool of Object.keys(TOOLS)) {
    try {
      await run("bash", ["-c", `PATH="$PATH:/usr/sbin:/sbin" command -v ${tool}`]);
    } catch {
      missing.push(tool);
    }
  }
  if (missing.length === 0) return null;
  const packages = [...new Set(missing.map((t) => TOOLS[t]!))].join(" ");
  return `The bench needs ${missing.join(", ")}. On Debian or Ubuntu: sudo apt-get install -y ${packages}`;
}

/** Runs a bash pipeline with pipefail; resolves with its stdout. */
export async function shell(script: string, args: string[] = []): Promise<string> {
  const { stdout } = await run("bash", ["-o", "pipefail", "-c", script, "bash", ...args], { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** Fills a new `sqlite3` file with a recipe (or the mixed one up to about `rawBytes`); returns its raw size. */
export async function buildNativeDatabase(path: string, data: number | Recipe): Promise<number> {
  const recipe = typeof data === "number" ? mixedRecipe(data, "") : data;
  const child = spawn("sqlite3", ["-bail", path], { stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const write = async (text: string) => {
    if (!child.stdin.write(text)) await once(child.stdin, "drain");
  };
  await write(`${recipe.schema}\n`);
  for (let batch = 0; batch < recipe.batches; batch++) await write(`BEGIN;\n${recipe.batchSql(batch)}\nCOMMIT;\n`);
  child.stdin.end();
  const [code] = (await once(child, "exit")) as [number];
  if (code !== 0) throw new Error(`sqlite3 could not build ${path}: ${stderr}`);
  return Number((await run("sqlite3", [path, recipe.rawSizeSql])).stdout.trim());
}

/** The native pipeline, the bench's baseline for an export. */
const PIPELINE = `sqlite3 "$1" .dump | gzip -6 | sha256sum`;

/**
 * One timed run of the native pipeline; seconds and the archive's SHA-256. With `oneCore` its three
 * processes share the first core (`taskset -c 0`), as the Worker's dump, gzip and hash share the
 * runtime's one thread under `wrangler dev`.
 */
export async function nativeExport(path: string, options: { oneCore?: boolean } = {}): Promise<{ seconds: number; sha256: string }> {
  const started = performance.now();
  const out = options.oneCore
    ? await shell(`taskset -c 0 bash -o pipefail -c '${PIPELINE}' bash "$1"`, [path])
    : await shell(PIPELINE, [path]);
  return { seconds: (performance.now() - started) / 1000, sha256: out.split(" ")[0]! };
}

/** Size in bytes of the native pipeline's gzip archive (an untimed pass). */
export async function nativeArchiveBytes(path: string): Promise<number> {
  return Number((await shell(`sqlite3 "$1" .dump | gzip -6 | wc -c`, [path])).trim());
}

/** What restoring a Worker archive gave, compared with the native file. */
export interface RoundTrip {
  /** Same schema and rows as the native file, once `extraObjects` are set aside. */
  same: boolean;
  /** Objects in the archive that the native file does not have, as `type name`. */
  extraObjects: string[];
  /** When not the same: rows per table that differ, e.g. `events: 1 row(s) differ`. */
  differences: string[];
}

const SCHEMA_OBJECTS = "SELECT type || ' ' || name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY 1";

/**
 * Restores a Worker archive into a fresh `sqlite3` file and compares its `.dump` with the native
 * file's: equal text means the same schema and the same rows, value for value. Objects only the
 * archive holds are listed, then dropped before the comparison.
 */
export async function restoreAndCompare(archive: string, nativePath: string, scratch: string): Promise<RoundTrip> {
  await shell(`rm -f "$2" && gunzip -c "$1" | sqlite3 -bail "$2"`, [archive, scratch]);
  const objects = async (p: string) => (await shell(`sqlite3 "$1" "$2"`, [p, SCHEMA_OBJECTS])).split("\n").filter(Boolean);
  const expected = new Set(await objects(nativePath));
  const extraObjects = (await objects(scratch)).filter((o) => !expected.has(o));
  const drops = extraObjects.map((o) => {
    const [type, ...name] = o.split(" ");
    return `DROP ${type!.toUpperCase()} IF EXISTS "${name.join(" ").replace(/"/g, '""')}";`;
  });
  if (drops.length > 0) await shell(`sqlite3 -bail "$1" "$2"`, [scratch, drops.join("\n")]);
  const digest = (p: string) => shell(`sqlite3 "$1" .dump | sha256sum`, [p]);
  const [restored, native] = await Promise.all([digest(scratch), digest(nativePath)]);
  const differences = restored === native ? [] : await rowDifferences(scratch, nativePath);
  await shell(`rm -f "$1"`, [scratch]);
  return { same: restored === native, extraObjects, differences };
}

/** Rows of each table found on one side only (compared value for value with EXCEPT). */
async function rowDifferences(restored: string, nativePath: string): Promise<string[]> {
  const tables = (await shell(`sqlite3 "$1" "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"`, [nativePath])).split("\n").filter(Boolean);
  const found: string[] = [];
  for (const table of tables) {
    const t = `"${table.replace(/"/g, '""')}"`;
    const sql = `ATTACH '${nativePath.replace(/'/g, "''")}' AS n; SELECT count(*) FROM (SELECT * FROM main.${t} EXCEPT SELECT * FROM n.${t});`;
    const count = Number((await shell(`sqlite3 "$1" "$2"`, [restored, sql])).trim());
    if (count > 0) found.push(`${table}: ${count} row(s) differ`);
  }
  return found;
}
