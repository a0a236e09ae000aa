import { createRoute, z } from "@hono/zod-openapi";
import { walletOf } from "../actions/wallet";
import { LedgerEntry } from "./account-schemas";
import { SIGNED_IN_REPLIES, consoleRouter, jsonReply } from "./openapi";

const walletRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "readWallet",
  tags: ["Billing"],
  summary: "Read the wallet",
  description: "The account's balance (the sum of its ledger) and its ledger entries, newest first. Amounts are whole DA.",
  responses: {
    200: jsonReply(z.object({ balance: z.number().int(), currency: z.literal("DA"), entries: z.array(LedgerEntry) }), "The balance and the ledger."),
    ...SIGNED_IN_REPLIES,
  },
});

/** The signed-in account's wallet: its balance and its ledger, newest first. */
export const walletRoutes = consoleRouter().openapi(walletRoute, async (c) => c.json(await walletOf(c), 200));
