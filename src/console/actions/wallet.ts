import type { Context } from "hono";
import { readWallet } from "../../billing/ledger";
import type { AppEnv } from "../../http/context";

/** The signed-in account's wallet: its balance and its ledger, newest first (api/wallet.ts, billing-page.tsx). */
export async function walletOf(c: Context<AppEnv>): Promise<Awaited<ReturnType<typeof readWallet>>> {
  return readWallet(c.env, c.get("accountId")!);
}
