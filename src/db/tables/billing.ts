import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/** The wallet's ledger and the operator's credit requests. */

/**
 * The wallet: append-only; an account's balance is the sum of its entries (whole DA). A charge is
 * written in the same D1 batch as the change it pays for. Entries outlive the app they name.
 */
export const ledgerEntries = sqliteTable(
  "ledger_entries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    at: integer("at").notNull(),
    /** Signed whole DA: credits positive, charges negative. */
    amount: integer("amount").notNull(),
    kind: text("kind", { enum: ["credit", "charge"] }).notNull(),
    appId: text("app_id"),
    appName: text("app_name"),
    periodStart: integer("period_start"),
    periodEnd: integer("period_end"),
    description: text("description").notNull(),
  },
  (t) => [index("ledger_account_idx").on(t.accountId, t.at), uniqueIndex("ledger_app_period_idx").on(t.appId, t.periodStart)],
);

/**
 * Operator credits sent with an `Idempotency-Key`: the key, what was asked (to refuse the key with
 * another request), the ledger entry it wrote and the reply the first call got, replayed to every
 * later call with the key. Written in the same D1 batch as the entry. Owner:
 * src/billing/credit-requests.ts.
 */
export const creditRequests = sqliteTable("credit_requests", {
  key: text("key").primaryKey(),
  accountId: text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  amount: integer("amount").notNull(),
  note: text("note").notNull(),
  entryId: text("entry_id").notNull(),
  createdAt: integer("created_at").notNull(),
  /** The first call's 201 body (JSON), filled in by the batch that wrote the entry. */
  response: text("response"),
});
