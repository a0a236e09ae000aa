import { getOwnedDatabase, managedDatabase } from "../databases/service";
import { deleteDatabaseAndArchives } from "./store";

/**
 * Deletes one of the account's databases: the record, its exports and their archives (the exports'
 * owner removes them with the record, in one batch), then the data itself. It lives with the
 * exports, above the databases it calls, so the databases layer never reaches up for archives.
 */
export async function deleteDatabase(env: Env, accountId: string, id: string, now: number): Promise<void> {
  const row = await getOwnedDatabase(env, accountId, id);
  await deleteDatabaseAndArchives(env, row.id, now);
  await managedDatabase(env, row.id).destroy();
}
