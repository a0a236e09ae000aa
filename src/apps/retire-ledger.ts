/**
 * The retire ledger (the only module naming the `retire_ledger` table): instances a switch
 * replaced and that are still to be drained and removed. The switch adds the row in its own D1
 * batch (`retireRowInsert`), so no instance is ever replaced without a record that it must go;
 * the app controller's alarm drains the rows, and the reconciler treats a row as the reason an
 * instance may still run.
 */
import { and, asc, eq, lte, sql } from "drizzle-orm";
import { database } from "../db/client";
import { retireLedger } from "../db/schema";

export type RetireRow = typeof retireLedger.$inferSelect;
export type NewRetireRow = Omit<RetireRow, "attempts">;

/** The insert a switch batches with its own statements; a second insert of one instance changes nothing. */
export function retireRowInsert(env: Env, row: NewRetireRow) {
  return database(env).insert(retireLedger).values(row).onConflictDoNothing();
}

/** The rows of an app, oldest drain deadline first. */
export async function retireRowsOf(env: Env, appId: string): Promise<RetireRow[]> {
  return database(env).select().from(retireLedger).where(eq(retireLedger.appId, appId)).orderBy(asc(retireLedger.drainUntil)).all();
}

/** Rows whose drain deadline has passed at `now`, across apps (the reconciler's view). */
export async function overdueRetireRows(env: Env, now: number): Promise<RetireRow[]> {
  return database(env).select().from(retireLedger).where(lte(retireLedger.drainUntil, now)).orderBy(asc(retireLedger.drainUntil)).all();
}

/** Every row: the instance ids that the ledger still explains. */
export async function allRetireRows(env: Env): Promise<RetireRow[]> {
  return database(env).select().from(retireLedger).all();
}

export async function retireLedgerLength(env: Env): Promise<number> {
  const row = await database(env).select({ n: sql<number>`count(*)` }).from(retireLedger).get();
  return row?.n ?? 0;
}

/** One more try at retiring the row's instance failed (the engine did not answer). */
export async function noteRetireAttempt(env: Env, instanceId: string): Promise<void> {
  await database(env).update(retireLedger).set({ attempts: sql`${retireLedger.attempts} + 1` }).where(eq(retireLedger.instanceId, instanceId)).run();
}

/** The instance is gone: its row goes. Deleting a row twice is harmless. */
export async function deleteRetireRow(env: Env, instanceId: string, appId?: string): Promise<void> {
  const where = appId ? and(eq(retireLedger.instanceId, instanceId), eq(retireLedger.appId, appId)) : eq(retireLedger.instanceId, instanceId);
  await database(env).delete(retireLedger).where(where).run();
}

/** An app's rows, when the app itself goes (Delete removes its instances itself). */
export async function deleteRetireRowsOf(env: Env, appId: string): Promise<void> {
  await database(env).delete(retireLedger).where(eq(retireLedger.appId, appId)).run();
}
