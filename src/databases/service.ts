import { and, desc, eq } from "drizzle-orm";
import { database } from "../db/client";
import { databases } from "../db/schema";
import { notFound } from "../http/errors";
import { iso, isUuid } from "../lib/time";

export interface DatabaseView {
  id: string;
  name: string;
  created_at: string;
}

/** One sentence for a database that is missing or not the caller's: the two look the same. */
export const NO_SUCH_DATABASE = "No database with this id exists in your account.";

/** The caller's database, or 404 NOT_FOUND exactly like a missing one. */
export async function getOwnedDatabase(env: Env, accountId: string, id: string) {
  const row = isUuid(id)
    ? await database(env)
        .select()
        .from(databases)
        .where(and(eq(databases.id, id.toLowerCase()), eq(databases.accountId, accountId)))
        .get()
    : undefined;
  if (!row) throw notFound(NO_SUCH_DATABASE);
  return row;
}

export async function listDatabases(env: Env, accountId: string): Promise<DatabaseView[]> {
  const rows = await database(env)
    .select()
    .from(databases)
    .where(eq(databases.accountId, accountId))
    .orderBy(desc(databases.createdAt));
  return rows.map(viewDatabase);
}

export function viewDatabase(row: { id: string; name: string; createdAt: number }): DatabaseView {
  return { id: row.id, name: row.name, created_at: iso(row.createdAt) };
}

export async function createDatabase(env: Env, accountId: string, name: string, now: number, id: string) {
  await database(env).insert(databases).values({ id, accountId, name, createdAt: now });
  return viewDatabase({ id, name, createdAt: now });
}

/** The Durable Object holding a database's data. */
export function managedDatabase(env: Env, id: string) {
  return env.MANAGED_DB.get(env.MANAGED_DB.idFromName(id));
}
