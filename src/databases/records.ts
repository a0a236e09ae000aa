import { eq } from "drizzle-orm";
import { database } from "../db/client";
import { databases } from "../db/schema";

/** The removal of a database's record, as a query for a D1 batch (the exports' owner writes what it owes with it). */
export function deleteDatabaseQuery(env: Env, databaseId: string) {
  return database(env).delete(databases).where(eq(databases.id, databaseId));
}
