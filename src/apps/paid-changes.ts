import { billingColumns, billingStateOf, planPrice } from "../billing/app-billing";
import { type Billed, deployTarget, refusedFor, stopColumns } from "../billing/app-events";
import { chargeWith, walletBalance } from "../billing/ledger";
import { renewalTime } from "../billing/renewal";
import { type BillingEvent, applyBilling } from "../billing/rules";
import type { DeployKind } from "../db/schema";
import { log } from "../http/log";
import { notifyRenewalFailed } from "../notifications/hooks";
import type { ContainerRuntime } from "../runtime/types";
import { type AppColumns, insertDeploy, paidAppUpdate, paidDeployInsert, recordStop, switchInstance, switchStatements } from "./app-columns";
import type { NewRetireRow } from "./retire-ledger";
import { type AppRow, getApp } from "./store";

/**
 * The app's changes that a charge may pay for (docs/billing.md), run by its AppController: the
 * billing rule decides (src/billing/rules.ts), and the charge and the change land in one D1 batch
 * (src/billing/ledger.ts chargeWith), or nothing does.
 */

/** The ledger entry of a charge the rule asked for, on the app. */
const chargeOf = <C extends object>(app: AppRow, charge: C, now: number) => ({ ...charge, accountId: app.accountId, appId: app.id, appName: app.name, at: now });

/**
 * Deploy pressed (rules 1-2): records the deploy; the first one, or one that would run an app whose
 * paid period has ended, also charges a fresh month from now, all in one batch, or writes nothing
 * when the wallet cannot cover it. `charge: false` (no engine configured: the deploy fails at
 * once) records it without billing.
 */
export async function recordDeploy(env: Env, app: AppRow, deployId: string, now: number, options: { charge: boolean; kind?: DeployKind }): Promise<Billed> {
  const event: BillingEvent = { kind: "deploy", ...planPrice(app.plan), app: deployTarget(app) };
  const outcome = options.charge ? applyBilling(billingStateOf(app), event, now, await walletBalance(env, app.accountId)) : ({ ok: true, state: billingStateOf(app), charge: null } as const);
  if (!outcome.ok) return outcome;
  const set = { firstDeployAt: app.firstDeployAt ?? now };
  if (!outcome.charge) {
    await insertDeploy(env, deployId, app.id, now, set, options.kind);
    return { ok: true };
  }
  const charged = await chargeWith(env, chargeOf(app, outcome.charge, now), (paid) => [
    paidDeployInsert(env, deployId, app.id, now, paid, options.kind),
    paidAppUpdate(env, app.id, { ...set, ...billingColumns(outcome.state) }, paid),
  ]);
  return charged ? { ok: true } : refusedFor(env, app, event, now);
}

/**
 * Start (rule 4): the period's end moves by the time stopped; after a renewal that could not be
 * paid, or once the paid period has ended, a fresh month is charged from now (refused without
 * funds). The app switches to `next` (its new instance) as the one compare-and-set on the instance
 * the start replaces, with the charge and `retire` (the stopped instance's row) in the same batch:
 * "not_switched" when another change got there first.
 */
export async function recordStart(env: Env, app: AppRow, now: number, next: AppColumns & { instanceId: string }, retire: NewRetireRow | null): Promise<Billed | "not_switched"> {
  const event: BillingEvent = { kind: "start", ...planPrice(app.plan) };
  const outcome = applyBilling(billingStateOf(app), event, now, await walletBalance(env, app.accountId));
  if (!outcome.ok) return outcome;
  const set = { ...next, status: "running" as const, ...billingColumns(outcome.state) };
  if (!outcome.charge) return (await switchInstance(env, app, set, app.instanceId, { retire })) ? { ok: true } : "not_switched";
  const charged = await chargeWith(env, chargeOf(app, outcome.charge, now), (paid) => switchStatements(env, app.id, set, app.instanceId, { retire }, paid));
  return charged ? { ok: true } : refusedFor(env, app, event, now);
}

/**
 * Renews the app's period if it has ended (src/billing/renewal.ts renewalTime). Without the funds
 * the app is stopped with the reason "payment due" (its instance stopped when an engine is
 * configured); Start then charges a fresh full period from that moment.
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
    const charged = await chargeWith(env, chargeOf(app, outcome.charge, now), (paid) => [
      paidAppUpdate(env, app.id, { periodStart: s.periodStart, periodEnd: s.periodEnd, paidPrice: s.paidPrice }, paid, app.periodEnd),
    ]);
    if (charged) {
      log("info", "app period renewed", { app_id: app.id, amount: outcome.charge.amount });
      return "renewed";
    }
    // The wallet changed between the read and the charge: treat it as not covered, below.
  }
  if (runtime && app.instanceId) await runtime.stop(app.instanceId).catch(() => undefined);
  await recordStop(env, app.id, stopColumns(app, now, "payment_due"));
  log("info", "app stopped: payment due", { app_id: app.id });
  await notifyRenewalFailed(env, app, now, planPrice(app.plan).price);
  return "payment_due";
}
