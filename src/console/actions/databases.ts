import type { Context } from "hono";
import { z } from "zod";
import { noteSqlRun } from "../../audit/note";
import type { StatementResult } from "../../databases/managed-database";
import { type DatabaseView, createDatabase as saveDatabase, getOwnedDatabase, listDatabases as databasesOf, managedDatabase, viewDatabase } from "../../databases/service";
import { deleteDatabase as deleteWithArchives } from "../../exports/delete-database";
import type { AppEnv } from "../../http/context";
import { type Outcome, refuse } from "./outcome";

/**
 * The account's databases: list, create, delete (with its exports and their archives), and run
 * SQL. The JSON routes (api/databases.ts) and the database pages (database-pages.tsx) call these;
 * a database of another account answers 404 exactly like a missing one (getOwnedDatabase).
 */

export const DatabaseName = z.object({
  name: z
    .string({ message: "Give the database a name." })
    .trim()
    .min(1, "Give the database a name.")
    .max(64, "Use at most 64 characters for the database name."),
});

const SqlValue = z.union([z.string(), z.number(), z.boolean(), z.null(), z.object({ blob: z.base64() })]);

export const SqlRequest = z.object({
  sql: z.string({ message: "Send the SQL to run." }).min(1, "Send the SQL to run.").max(100_000, "The SQL is longer than 100000 characters."),
  params: z.array(SqlValue).max(100, "At most 100 parameters.").optional(),
});

export type { DatabaseView };

export async function listDatabases(c: Context<AppEnv>): Promise<DatabaseView[]> {
  return databasesOf(c.env, c.get("accountId")!);
}

/** One of the account's databases; 404 NOT_FOUND otherwise. */
export async function ownedDatabase(c: Context<AppEnv>, id: string): Promise<DatabaseView> {
  return viewDatabase(await getOwnedDatabase(c.env, c.get("accountId")!, id));
}

export async function createDatabase(c: Context<AppEnv>, name: string): Promise<DatabaseView> {
  const { now, uuid } = c.get("deps");
  return saveDatabase(c.env, c.get("accountId")!, name, now(), uuid());
}

/** Deletes one of the account's databases with its exports and archives; the deleted one. */
export async function deleteDatabase(c: Context<AppEnv>, id: string): Promise<DatabaseView> {
  const row = await ownedDatabase(c, id);
  await deleteWithArchives(c.env, c.get("accountId")!, row.id, c.get("deps").now());
  return row;
}

/**
 * Runs SQL in one of the account's databases (`db`, from ownedDatabase; several statements run as
 * one transaction): every statement's result, or the first failing statement's error. The audit
 * row counts what was run.
 */
export async function runSql(c: Context<AppEnv>, db: DatabaseView, input: z.output<typeof SqlRequest>): Promise<Outcome<{ results: StatementResult[] }>> {
  const outcome = await managedDatabase(c.env, db.id).execute(input.sql, input.params ?? []);
  if (!outcome.ok) return refuse("INVALID_REQUEST", `Statement ${outcome.statement + 1}: ${outcome.error}`);
  noteSqlRun(c, outcome.results);
  return { ok: true, results: outcome.results };
}
