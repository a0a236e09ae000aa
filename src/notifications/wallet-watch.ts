import { renewalsDueBy } from "../apps/store";
import { planPrice } from "../billing/app-billing";
import { CURRENCY, walletBalance } from "../billing/ledger";
import { settleIncident } from "./raise";
import { WALLET_LOW_DAYS, walletLow } from "./rules";
import { openSubjects } from "./store";

/**
 * wallet.low, on the cron: each account with renewals due within WALLET_LOW_DAYS (and each whose
 * wallet incident is open) has its balance compared with those renewals' prices; the incident
 * opens once when the balance falls short and closes when it covers them again (credit added,
 * an app stopped).
 */
export async function watchWallets(env: Env, now: number): Promise<void> {
  const due = new Map<string, number[]>();
  for (const app of await renewalsDueBy(env, now + WALLET_LOW_DAYS * 86_400_000)) {
    due.set(app.accountId, [...(due.get(app.accountId) ?? []), planPrice(app.plan).price]);
  }
  const open = (await openSubjects(env, "wallet_low")).map((subject) => subject.slice("account:".length));
  for (const accountId of new Set([...due.keys(), ...open])) {
    const prices = due.get(accountId) ?? [];
    const balance = await walletBalance(env, accountId);
    const total = prices.reduce((a, b) => a + b, 0);
    const message = `The wallet holds ${balance} ${CURRENCY}; the renewals due within ${WALLET_LOW_DAYS} days take ${total} ${CURRENCY}. Add credit so the apps are not stopped.`;
    await settleIncident(env, { subject: `account:${accountId}`, kind: "wallet_low", holds: walletLow(balance, prices), now }, {
      opened: (key) => ({ event: "wallet.low", accountId, key, at: now, details: { balance, due: total, currency: CURRENCY, renewals: prices.length, message } }),
    });
  }
}
