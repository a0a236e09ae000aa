import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { managedDatabase } from "../../src/databases/service";
import { splitStatements } from "../../src/databases/split-sql";

export type ManagedDatabaseStub = ReturnType<typeof managedDatabase>;

/** A fresh, empty managed database. */
export function freshDatabase(): { id: string; stub: ManagedDatabaseStub } {
  const id = crypto.randomUUID();
  return { id, stub: managedDatabase(env, id) };
}

/** Runs `fn` inside the object with its SQL storage (the stub's type is too deep for runInDurableObject). */
export function withSql<R>(stub: ManagedDatabaseStub, fn: (sql: SqlStorage, state: DurableObjectState) => R): Promise<R> {
  return runInDurableObject(stub as unknown as DurableObjectStub, (_instance: unknown, state) => fn(state.storage.sql, state));
}

export async function runSql(stub: ManagedDatabaseStub, sql: string): Promise<void> {
  const outcome = await stub.execute(sql);
  if (!outcome.ok) throw new Error(`statement ${outcome.statement + 1}: ${outcome.error}`);
}

/** The SQL text of dump pieces (each ends at a row's end, so each decodes on its own). */
export function textOf(pieces: readonly { bytes: Uint8Array }[]): string {
  const decoder = new TextDecoder();
  return pieces.map((p) => decoder.decode(p.bytes)).join("");
}

export async function readText(stream: ReadableStream<Uint8Array>): Promise<{ text: string; chunks: number[] }> {
  const decoder = new TextDecoder();
  const chunks: number[] = [];
  let text = "";
  for await (const chunk of stream) {
    chunks.push(chunk.byteLength);
    text += decoder.decode(chunk, { stream: true });
  }
  return { text: text + decoder.decode(), chunks };
}

/**
 * Replays a dump into an empty database. The object's SQLite refuses BEGIN/COMMIT and some
 * PRAGMAs, so the statements between them run in one transactionSync instead.
 */
export async function restoreDump(stub: ManagedDatabaseStub, dump: string): Promise<void> {
  const statements = splitStatements(dump).filter((s) => !/^(PRAGMA foreign_keys=OFF|BEGIN TRANSACTION|COMMIT);$/.test(s));
  await withSql(stub, (sql, state) => state.storage.transactionSync(() => statements.forEach((s) => sql.exec(s))));
}

/**
 * Everything a dump must carry, in comparable form: schema objects (minus runtime internals) and
 * every table's rows rendered by quote(), which keeps the storage class and every bit of a REAL.
 */
export async function snapshot(stub: ManagedDatabaseStub) {
  return withSql(stub, (sql) => {
    const schema = sql
      .exec<{ type: string; name: string; tbl_name: string; sql: string | null }>(
        "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT GLOB '_cf_*' ORDER BY type, name",
      )
      .toArray();
    const tables = sql
      .exec<{ name: string }>("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type IN ('table', 'virtual') AND name NOT GLOB '_cf_*' AND name <> 'sqlite_schema'")
      .toArray()
      .map((t) => t.name)
      .sort();
    const rows: Record<string, string[]> = {};
    for (const table of tables) {
      const ident = `"${table.replace(/"/g, '""')}"`;
      const columns = sql
        .exec<{ name: string; hidden: number }>(`PRAGMA table_xinfo(${ident})`)
        .toArray()
        .filter((c) => c.hidden !== 1)
        .map((c) => `quote("${c.name.replace(/"/g, '""')}")`);
      rows[table] = sql
        .exec<{ v: string }>(`SELECT ${columns.join("||'|'||")} AS v FROM ${ident}`)
        .toArray()
        .map((r) => r.v)
        .sort();
    }
    return { schema, rows };
  });
}

/** The snapshot journal's tables and triggers in the database (none once no dump is open). */
export async function journalObjects(stub: ManagedDatabaseStub): Promise<string[]> {
  return withSql(stub, (sql) =>
    sql
      .exec<{ name: string }>("SELECT name FROM sqlite_schema WHERE name GLOB '_export_snapshot_*' ORDER BY name")
      .toArray()
      .map((r) => r.name),
  );
}
