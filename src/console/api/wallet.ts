import { Hono } from "hono";
import { readWallet } from "../../billing/ledger";
import type { AppEnv } from "../../http/context";

/** The signed-in account's wallet: its balance and its ledger, newest first. */
export const walletRoutes = new Hono<AppEnv>().get("/", async (c) => c.json(await readWallet(c.env, c.get("accountId")!)));
