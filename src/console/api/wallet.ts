import { Hono } from "hono";
import { CURRENCY, listEntries, walletBalance } from "../../billing/ledger";
import type { AppEnv } from "../../http/context";

/** The signed-in account's wallet: its balance and its ledger, newest first. */
export const walletRoutes = new Hono<AppEnv>().get("/", async (c) => {
  const accountId = c.get("accountId")!;
  const [balance, entries] = await Promise.all([walletBalance(c.env, accountId), listEntries(c.env, accountId)]);
  return c.json({ balance, currency: CURRENCY, entries });
});
