import type { AppRow } from "../apps/store";
import { billingColumns, billingStateOf, planPrice } from "./app-billing";
import { walletBalance } from "./ledger";
import { type BillingEvent, applyBilling } from "./rules";

/**
 * The billing step of each app control, asked by the AppController: the rule decides
 * (src/billing/rules.ts), and a charge lands in the same D1 batch as the change it pays for
 * (src/apps/paid-changes.ts writes the two together through their owners).
 */

export type Billed = { ok: true } | { ok: false; code: "INSUFFICIENT_FUNDS"; message: string };

/** A charge that did not land: the wallet changed between the read and the batch. */
export async function refusedFor(env: Env, app: AppRow, event: BillingEvent, now: number): Promise<Billed> {
  const again = applyBilling(billingStateOf(app), event, now, await walletBalance(env, app.accountId));
  return again.ok ? { ok: false, code: "INSUFFICIENT_FUNDS", message: "Your wallet no longer covers this charge." } : again;
}

/** What a deploy pressed now does with the app (src/billing/rules.ts, the deploy event). */
export function deployTarget(app: AppRow): "running" | "stopped" | "idle" {
  return app.status === "running" ? "running" : app.status === "stopped" ? "stopped" : "idle";
}

/** Stop (rule 3): the app's status and its stopped clock in one write. */
export function stopColumns(app: AppRow, now: number, reason: "stopped" | "payment_due" = "stopped") {
  const outcome = applyBilling(billingStateOf(app), { kind: "stop" }, now, 0);
  const state = outcome.ok ? outcome.state : billingStateOf(app);
  return { ...billingColumns({ ...state, paymentDue: reason === "payment_due" || state.paymentDue }), status: "stopped" as const };
}

/** Start is refused before anything runs when the wallet cannot pay a period that is due. */
export async function startRefusal(env: Env, app: AppRow, now: number): Promise<Billed> {
  const outcome = applyBilling(billingStateOf(app), { kind: "start", ...planPrice(app.plan) }, now, await walletBalance(env, app.accountId));
  return outcome.ok ? { ok: true } : outcome;
}
