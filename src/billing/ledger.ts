import { type SQL, desc, eq, sql } from "drizzle-orm";
import { database } from "../db/client";
import { ledgerEntries } from "../db/schema";
import { iso } from "../lib/time";

/**
 * The wallet: an append-only ledger per account, in whole DA. The balance is the sum of the
 * entries; nothing else holds money. Owner of the `ledger_entries` table: every query of it is
 * here (test/unit/table-owners.test.ts).
 */

export const CURRENCY = "DA";

export async function walletBalance(env: Env, accountId: string): Promise<number> {
  const row = await database(env)
    .select({ balance: sql<number>`coalesce(sum(${ledgerEntries.amount}), 0)` })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.accountId, accountId))
    .get();
  return row?.balance ?? 0;
}

export interface LedgerEntryView {
  id: string;
  at: string;
  amount: number;
  kind: "credit" | "charge";
  app_id: string | null;
  app_name: string | null;
  period_start: string | null;
  period_end: string | null;
  description: string;
}

export async function listEntries(env: Env, accountId: string, limit = 200): Promise<LedgerEntryView[]> {
  const rows = await database(env)
    .select()
    .from(ledgerEntries)
    .where(eq(ledgerEntries.accountId, accountId))
    .orderBy(desc(ledgerEntries.at), sql`rowid desc`)
    .limit(limit);
  return rows.map((r) => ({
    id: r.id,
    at: iso(r.at),
    amount: r.amount,
    kind: r.kind,
    app_id: r.appId,
    app_name: r.appName,
    period_start: r.periodStart === null ? null : iso(r.periodStart),
    period_end: r.periodEnd === null ? null : iso(r.periodEnd),
    description: r.description,
  }));
}

/** The wallet as the console shows it: balance and entries, newest first. */
export async function readWallet(env: Env, accountId: string): Promise<{ balance: number; currency: typeof CURRENCY; entries: LedgerEntryView[] }> {
  const [balance, entries] = await Promise.all([walletBalance(env, accountId), listEntries(env, accountId)]);
  return { balance, currency: CURRENCY, entries };
}

export async function addCredit(env: Env, input: { id: string; accountId: string; amount: number; note: string; at: number }): Promise<void> {
  await database(env)
    .insert(ledgerEntries)
    .values({ id: input.id, accountId: input.accountId, at: input.at, amount: input.amount, kind: "credit", description: input.note });
}

/** A SQL expression for an account's balance (one `?`: the account id), for statements of other tables' owners. */
export const BALANCE_SQL = "(SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE account_id = ?)";

/**
 * The insert of a credit entry for a D1 batch, written only when `onlyIf` (an SQL condition and
 * its parameters) holds when the batch runs.
 */
export function creditStatement(
  env: Env,
  input: { id: string; accountId: string; amount: number; note: string; at: number },
  onlyIf: { sql: string; params: unknown[] },
): D1PreparedStatement {
  return env.DB.prepare(`INSERT INTO ledger_entries (id, account_id, at, amount, kind, description) SELECT ?, ?, ?, ?, 'credit', ? WHERE ${onlyIf.sql}`).bind(
    input.id,
    input.accountId,
    input.at,
    input.amount,
    input.note,
    ...onlyIf.params,
  );
}

export interface ChargeEntry {
  accountId: string;
  appId: string;
  appName: string;
  amount: number;
  periodStart: number;
  periodEnd: number;
  description: string;
  at: number;
}

/**
 * A charge and the change it pays for in one D1 batch (a transaction): the charge row is written
 * only if the wallet covers it at that moment, and every statement `then` returns must hold
 * `paid` (the charge row exists) in its condition, so either all land or none. The unique (app, period start) index makes a second charge of one period fail the
 * insert, so a renewal fired twice charges once. Resolves false when nothing was written.
 */
export async function chargeWith(env: Env, entry: ChargeEntry, then: (paid: SQL) => D1PreparedStatement[]): Promise<boolean> {
  const id = crypto.randomUUID();
  const insert = env.DB.prepare(
    `INSERT OR IGNORE INTO ledger_entries (id, account_id, at, amount, kind, app_id, app_name, period_start, period_end, description)
     SELECT ?1, ?2, ?3, ?4, 'charge', ?5, ?6, ?7, ?8, ?9
     WHERE (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE account_id = ?2) >= ?10`,
  ).bind(id, entry.accountId, entry.at, -entry.amount, entry.appId, entry.appName, entry.periodStart, entry.periodEnd, entry.description, entry.amount);
  const [inserted] = await env.DB.batch([insert, ...then(paidBy(id))]);
  return inserted?.meta.changes === 1;
}

/** The condition every statement paid for by a charge carries: the charge row landed. */
function paidBy(entryId: string): SQL {
  return sql`EXISTS (SELECT 1 FROM ${ledgerEntries} WHERE ${ledgerEntries.id} = ${entryId})`;
}

/** The app's charges, oldest first: what the model-based test compares with the app's periods. */
export async function appCharges(env: Env, appId: string): Promise<{ amount: number; periodStart: number | null; periodEnd: number | null; at: number }[]> {
  return database(env)
    .select({ amount: ledgerEntries.amount, periodStart: ledgerEntries.periodStart, periodEnd: ledgerEntries.periodEnd, at: ledgerEntries.at })
    .from(ledgerEntries)
    .where(eq(ledgerEntries.appId, appId))
    .orderBy(ledgerEntries.at, sql`rowid`);
}
