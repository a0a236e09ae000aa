import { eq } from "drizzle-orm";
import { database } from "../db/client";
import { creditRequests } from "../db/schema";
import { iso } from "../lib/time";
import { BALANCE_SQL, CURRENCY, creditStatement } from "./ledger";

/**
 * Idempotent operator credits: every query of `credit_requests` is here. One D1 batch (a
 * transaction) claims the key, writes the ledger entry only if this call's claim is the one
 * stored, and stores the reply with the balance right after the entry; so two calls with one key,
 * however close together, credit once, and every call with the key gets the first call's reply.
 * Keys are kept with their reply for good (credits are few).
 */

export interface CreditReply {
  id: string;
  account_id: string;
  amount: number;
  note: string;
  at: string;
  balance: number;
  currency: typeof CURRENCY;
}

export type CreditOnce =
  /** The reply to send; `replayed` when an earlier call with the key wrote it. */
  | { kind: "reply"; reply: CreditReply; replayed: boolean }
  /** The key was first used for another request (another account, amount or note). */
  | { kind: "reused" };

export async function creditOnce(env: Env, key: string, input: { id: string; accountId: string; amount: number; note: string; at: number }): Promise<CreditOnce> {
  const ours = "EXISTS (SELECT 1 FROM credit_requests WHERE key = ? AND entry_id = ?)";
  await env.DB.batch([
    env.DB.prepare(
      "INSERT OR IGNORE INTO credit_requests (key, account_id, amount, note, entry_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ).bind(key, input.accountId, input.amount, input.note, input.id, input.at),
    creditStatement(env, input, { sql: ours, params: [key, input.id] }),
    env.DB.prepare(
      `UPDATE credit_requests SET response = json_object('id', entry_id, 'account_id', account_id, 'amount', amount, 'note', note, 'at', ?,
         'balance', ${BALANCE_SQL}, 'currency', ?)
       WHERE key = ? AND entry_id = ?`,
    ).bind(iso(input.at), input.accountId, CURRENCY, key, input.id),
  ]);
  const row = await database(env).select().from(creditRequests).where(eq(creditRequests.key, key)).get();
  if (!row?.response) throw new Error("credit request row missing after its batch");
  if (row.accountId !== input.accountId || row.amount !== input.amount || row.note !== input.note) return { kind: "reused" };
  return { kind: "reply", reply: JSON.parse(row.response) as CreditReply, replayed: row.entryId !== input.id };
}
