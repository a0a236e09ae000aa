/**
 * The retire ledger (the only module naming the `retire_ledger` table): instances a switch
 * replaced and that are still to be drained and removed. The switch adds the row in its own D1
 * batch (`retireRowWhen`), so no instance is ever replaced without a record that it must go;
 * the app controller's alarm drains the rows, and the reconciler treats a row as the reason an
 * instance may still run.
 */
import { type SQL, and, asc, eq, lte, sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { database } from "../db/client";
import { retireLedger } from "../db/schema";

export type RetireRow = typeof retireLedger.$inferSelect;
export type NewRetireRow = Omit<RetireRow, "attempts">;

/** What a switch knows of the instance it replaces: the app's record as read before the switch. */
export interface ReplacedApp {
  id: string;
  status: string;
  instanceId: string | null;
  instanceEngine: string | null;
  instanceNode: string | null;
  instancePort: number | null;
  image: string | null;
}

/**
 * The row for the instance a switch to `newInstanceId` replaces, or null when nothing is to go: the
 * app had no instance, or the engine replaced it in place (same id, Swarm's `replace`). A serving
 * instance drains until `now + drainSeconds`; a stopped one has nothing to drain.
 */
export function retireRowFor(app: ReplacedApp, newInstanceId: string, now: number, drainSeconds: number): NewRetireRow | null {
  if (!app.instanceId || app.instanceId === newInstanceId) return null;
  const serving = app.status === "running";
  return {
    instanceId: app.instanceId,
    appId: app.id,
    engine: app.instanceEngine,
    node: app.instanceNode,
    port: app.instancePort,
    image: app.image,
    serving,
    drainUntil: now + (serving ? drainSeconds * 1000 : 0),
    createdAt: now,
  };
}

/**
 * The row as one statement of the switch's own D1 batch, placed after the write that moves the
 * app: it lands only when `switched` holds then (the app runs its new instance), so a switch that
 * did not land retires nothing. A second insert of one instance changes nothing.
 */
export function retireRowWhen(row: NewRetireRow, switched: SQL): SQL {
  return sql`INSERT OR IGNORE INTO ${retireLedger} (instance_id, app_id, engine, node, port, image, serving, drain_until, created_at) SELECT ${row.instanceId}, ${row.appId}, ${row.engine}, ${row.node}, ${row.port}, ${row.image}, ${row.serving ? 1 : 0}, ${row.drainUntil}, ${row.createdAt} WHERE ${switched}`;
}

/** The same as a prepared statement, for a batch of prepared statements (a charge's, src/billing/ledger.ts). */
export function retireRowStatement(env: Env, row: NewRetireRow, switched: SQL): D1PreparedStatement {
  const query = new SQLiteAsyncDialect().sqlToQuery(retireRowWhen(row, switched));
  return env.DB.prepare(query.sql).bind(...query.params);
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
