import { eq } from "drizzle-orm";
import { type AppRow, getApp } from "../apps/store";
import { database } from "../db/client";
import { apps } from "../db/schema";
import { log } from "../http/log";
import type { ContainerRuntime } from "../runtime/types";
import { billingStateOf, planPrice } from "./app-billing";
import { stopColumns } from "./app-events";
import { PAID_BY, chargeWith, walletBalance } from "./ledger";
import { applyBilling } from "./rules";

/**
 * Renewal (issue 13; not in SPEC.md): at the end of a paid period a running app is charged the
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
    const charged = await chargeWith(env, { ...outcome.charge, accountId: app.accountId, appId: app.id, appName: app.name, at: now }, (entryId) => [
      env.DB.prepare(`UPDATE apps SET period_start = ?, period_end = ?, paid_price = ? WHERE id = ? AND period_end = ? AND ${PAID_BY}`).bind(
        s.periodStart,
        s.periodEnd,
        s.paidPrice,
        app.id,
        app.periodEnd,
        entryId,
      ),
    ]);
    if (charged) {
      log("info", "app period renewed", { app_id: app.id, amount: outcome.charge.amount });
      return "renewed";
    }
    // The wallet changed between the read and the charge: treat it as not covered, below.
  }
  if (runtime && app.instanceId) await runtime.stop(app.instanceId).catch(() => undefined);
  await database(env).update(apps).set(stopColumns(app, now, "payment_due")).where(eq(apps.id, app.id));
  log("info", "app stopped: payment due", { app_id: app.id });
  return "payment_due";
}
