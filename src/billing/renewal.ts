import { type AppRow, getApp, paidAppUpdate, updateApp } from "../apps/store";
import { log } from "../http/log";
import { notifyRenewalFailed } from "../notifications/hooks";
import type { ContainerRuntime } from "../runtime/types";
import { billingStateOf, planPrice } from "./app-billing";
import { stopColumns } from "./app-events";
import { chargeWith, walletBalance } from "./ledger";
import { applyBilling } from "./rules";

/**
 * Renewal (docs/billing.md): at the end of a paid period a running app is charged the
 * current plan's price for the next period, which starts where the last one ended. Run by the
 * app's AppController alarm. Exactly once: a second run finds the period already moved on, and
 * the ledger's unique (app, period start) index refuses a second charge of one period.
 */

/** How long a renewal that falls due while a change is in flight waits before it is tried again. */
export const RENEWAL_RETRY_MS = 30_000;

/** When the app's paid period ends and a renewal is due: only a running, charged app renews (rule 3). */
export function renewalTime(app: AppRow): number | null {
  if (app.status !== "running" || !app.billingCharged || app.stoppedSince !== null || app.periodEnd === null) return null;
  return app.periodEnd;
}

/**
 * Renews the app's period if it has ended. Without the funds the app is stopped with the reason
 * "payment due" (its instance stopped when an engine is configured); Start then charges a fresh
 * full period from that moment.
 */
export async function renewIfDue(env: Env, appId: string, now: number, runtime: ContainerRuntime | null): Promise<"renewed" | "payment_due" | "not_due"> {
  const app = await getApp(env, appId);
  const due = app ? renewalTime(app) : null;
  if (!app || due === null || now < due) return "not_due";
  const outcome = applyBilling(billingStateOf(app), { kind: "renew", ...planPrice(app.plan) }, now, await walletBalance(env, app.accountId));
  if (!outcome.ok) return "not_due";
  if (outcome.charge) {
    const s = outcome.state;
    // Conditional on the period it renews, so a renewal run twice lands once.
    const charged = await chargeWith(env, { ...outcome.charge, accountId: app.accountId, appId: app.id, appName: app.name, at: now }, (paid) => [
      paidAppUpdate(env, app.id, { periodStart: s.periodStart, periodEnd: s.periodEnd, paidPrice: s.paidPrice }, paid, { periodEnd: app.periodEnd }),
    ]);
    if (charged) {
      log("info", "app period renewed", { app_id: app.id, amount: outcome.charge.amount });
      return "renewed";
    }
    // The wallet changed between the read and the charge: treat it as not covered, below.
  }
  if (runtime && app.instanceId) await runtime.stop(app.instanceId).catch(() => undefined);
  await updateApp(env, app.id, stopColumns(app, now, "payment_due"));
  log("info", "app stopped: payment due", { app_id: app.id });
  await notifyRenewalFailed(env, app, now, planPrice(app.plan).price);
  return "payment_due";
}
