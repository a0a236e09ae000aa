import { eq } from "drizzle-orm";
import type { AppRow } from "../apps/store";
import { database } from "../db/client";
import { apps, deploys } from "../db/schema";
import { billingColumns, billingStateOf, planPrice } from "./app-billing";
import { PAID_BY, chargeWith, walletBalance } from "./ledger";
import { type BillingEvent, applyBilling } from "./rules";

/**
 * The billing step of each app control, asked by the AppController: the rule decides
 * (src/billing/rules.ts), and a charge lands in the same D1 batch as the change it pays for.
 */

export type Billed = { ok: true } | { ok: false; code: "INSUFFICIENT_FUNDS"; message: string };

const refusedFor = async (env: Env, app: AppRow, event: BillingEvent, now: number): Promise<Billed> => {
  const again = applyBilling(billingStateOf(app), event, now, await walletBalance(env, app.accountId));
  return again.ok ? { ok: false, code: "INSUFFICIENT_FUNDS", message: "Your wallet no longer covers this charge." } : again;
};

/**
 * Deploy pressed (rules 1-2): records the deploy; the first one also charges the plan's full price
 * and starts the paid period, all in one batch, or writes nothing when the wallet cannot cover it.
 * `charge: false` (no engine configured: the deploy fails at once) records it without billing.
 */
export async function recordDeploy(env: Env, app: AppRow, deployId: string, now: number, options: { charge: boolean }): Promise<Billed> {
  const event: BillingEvent = { kind: "deploy", ...planPrice(app.plan) };
  const outcome = options.charge ? applyBilling(billingStateOf(app), event, now, await walletBalance(env, app.accountId)) : null;
  if (outcome && !outcome.ok) return outcome;
  const db = database(env);
  if (!outcome?.charge) {
    await db.batch([
      db.insert(deploys).values({ id: deployId, appId: app.id, status: "building", startedAt: now }),
      db.update(apps).set({ firstDeployAt: app.firstDeployAt ?? now }).where(eq(apps.id, app.id)),
    ]);
    return { ok: true };
  }
  const s = outcome.state;
  const charged = await chargeWith(env, { ...outcome.charge, accountId: app.accountId, appId: app.id, appName: app.name, at: now }, (entryId) => [
    env.DB.prepare(`INSERT INTO deploys (id, app_id, status, started_at, attempts) SELECT ?, ?, 'building', ?, 0 WHERE ${PAID_BY}`).bind(deployId, app.id, now, entryId),
    env.DB.prepare(
      `UPDATE apps SET first_deploy_at = coalesce(first_deploy_at, ?), billing_charged = 1, period_start = ?, period_end = ?, stopped_since = NULL, payment_due = 0, paid_price = ? WHERE id = ? AND ${PAID_BY}`,
    ).bind(now, s.periodStart, s.periodEnd, s.paidPrice, app.id, entryId),
  ]);
  return charged ? { ok: true } : refusedFor(env, app, event, now);
}

/** Stop (rule 3): the app's status and its stopped clock in one write. */
export function stopColumns(app: AppRow, now: number, reason: "stopped" | "payment_due" = "stopped") {
  const outcome = applyBilling(billingStateOf(app), { kind: "stop" }, now, 0);
  const state = outcome.ok ? outcome.state : billingStateOf(app);
  return { ...billingColumns({ ...state, paymentDue: reason === "payment_due" || state.paymentDue }), status: "stopped" as const };
}

/**
 * Start (rule 4): the period's end moves by the time stopped; after a renewal that could not be
 * paid, a fresh full period is charged from now (refused without funds). `columns` are the
 * instance's columns, written in the same statement.
 */
export async function recordStart(
  env: Env,
  app: AppRow,
  now: number,
  columns: { instanceId: string; instanceUrl: string; envAppliedVersion: number },
): Promise<Billed> {
  const event: BillingEvent = { kind: "start", ...planPrice(app.plan) };
  const outcome = applyBilling(billingStateOf(app), event, now, await walletBalance(env, app.accountId));
  if (!outcome.ok) return outcome;
  const db = database(env);
  if (!outcome.charge) {
    await db.update(apps).set({ ...billingColumns(outcome.state), status: "running", ...columns }).where(eq(apps.id, app.id));
    return { ok: true };
  }
  const s = outcome.state;
  const charged = await chargeWith(env, { ...outcome.charge, accountId: app.accountId, appId: app.id, appName: app.name, at: now }, (entryId) => [
    env.DB.prepare(
      `UPDATE apps SET status = 'running', instance_id = ?, instance_url = ?, env_applied_version = ?, period_start = ?, period_end = ?, stopped_since = NULL, payment_due = 0, paid_price = ? WHERE id = ? AND ${PAID_BY}`,
    ).bind(columns.instanceId, columns.instanceUrl, columns.envAppliedVersion, s.periodStart, s.periodEnd, s.paidPrice, app.id, entryId),
  ]);
  return charged ? { ok: true } : refusedFor(env, app, event, now);
}

/** Start is refused before anything runs when the wallet cannot pay a period that is due. */
export async function startRefusal(env: Env, app: AppRow, now: number): Promise<Billed> {
  const outcome = applyBilling(billingStateOf(app), { kind: "start", ...planPrice(app.plan) }, now, await walletBalance(env, app.accountId));
  return outcome.ok ? { ok: true } : outcome;
}
