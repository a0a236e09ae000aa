import { type NewRetireRow, retireRowStatement } from "../apps/retire-ledger";
import { type AppColumns, type AppExpect, type AppRow, insertDeploy, paidAppUpdate, paidDeployInsert, runsInstance, switchApp } from "../apps/store";
import type { DeployKind } from "../db/schema";
import { billingColumns, billingStateOf, planPrice } from "./app-billing";
import { chargeWith, walletBalance } from "./ledger";
import { type BillingEvent, type BillingOutcome, applyBilling } from "./rules";

/**
 * The billing step of each app control, asked by the AppController: the rule decides
 * (src/billing/rules.ts), and a charge lands in the same D1 batch as the change it pays for. The
 * records are written through their owners (apps/store.ts, ledger.ts).
 */

export type Billed = { ok: true } | { ok: false; code: "INSUFFICIENT_FUNDS"; message: string };

const refusedFor = async (env: Env, app: AppRow, event: BillingEvent, now: number): Promise<Billed> => {
  const again = applyBilling(billingStateOf(app), event, now, await walletBalance(env, app.accountId));
  return again.ok ? { ok: false, code: "INSUFFICIENT_FUNDS", message: "Your wallet no longer covers this charge." } : again;
};

/** What a deploy pressed now does with the app (src/billing/rules.ts, the deploy event). */
export function deployTarget(app: AppRow): "running" | "stopped" | "idle" {
  return app.status === "running" ? "running" : app.status === "stopped" ? "stopped" : "idle";
}

/**
 * Writes `set` on the app, with the charge `outcome` asks for in the same batch (or nothing at all
 * when the wallet no longer covers it). `extra` adds statements paid for by the same charge.
 */
async function billedWrite(
  env: Env,
  app: AppRow,
  event: BillingEvent,
  outcome: Extract<BillingOutcome, { ok: true }>,
  now: number,
  write: { set: AppColumns; expect?: AppExpect; unpaid: () => Promise<boolean>; extra?: (paid: Parameters<typeof paidAppUpdate>[3]) => D1PreparedStatement[]; after?: D1PreparedStatement[] },
): Promise<Billed | "not_switched"> {
  if (!outcome.charge) return (await write.unpaid()) ? { ok: true } : "not_switched";
  const set = { ...write.set, ...billingColumns(outcome.state) };
  const charged = await chargeWith(env, { ...outcome.charge, accountId: app.accountId, appId: app.id, appName: app.name, at: now }, (paid) => [
    ...(write.extra?.(paid) ?? []),
    paidAppUpdate(env, app.id, set, paid, write.expect),
    ...(write.after ?? []),
  ]);
  return charged ? { ok: true } : refusedFor(env, app, event, now);
}

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
  const result = await billedWrite(env, app, event, outcome, now, {
    set,
    unpaid: async () => (await insertDeploy(env, deployId, app.id, now, set, options.kind), true),
    extra: (paid) => [paidDeployInsert(env, deployId, app.id, now, paid, options.kind)],
  });
  return result === "not_switched" ? { ok: true } : result;
}

/** Stop (rule 3): the app's status and its stopped clock in one write. */
export function stopColumns(app: AppRow, now: number, reason: "stopped" | "payment_due" = "stopped") {
  const outcome = applyBilling(billingStateOf(app), { kind: "stop" }, now, 0);
  const state = outcome.ok ? outcome.state : billingStateOf(app);
  return { ...billingColumns({ ...state, paymentDue: reason === "payment_due" || state.paymentDue }), status: "stopped" as const };
}

/**
 * Start (rule 4): the period's end moves by the time stopped; after a renewal that could not be
 * paid, or once the paid period has ended, a fresh month is charged from now (refused without
 * funds). `columns` (the new instance) are written in the same statement, as a compare-and-set on
 * the instance the start replaces: "not_switched" when another change got there first. `retire`
 * (the stopped instance it replaces) is written in the same batch when the switch lands.
 */
export async function recordStart(env: Env, app: AppRow, now: number, columns: AppColumns & { instanceId: string }, retire: NewRetireRow | null = null): Promise<Billed | "not_switched"> {
  const event: BillingEvent = { kind: "start", ...planPrice(app.plan) };
  const outcome = applyBilling(billingStateOf(app), event, now, await walletBalance(env, app.accountId));
  if (!outcome.ok) return outcome;
  const set = { ...columns, status: "running" as const };
  const expect = { instanceId: app.instanceId };
  return billedWrite(env, app, event, outcome, now, {
    set,
    expect,
    unpaid: () => switchApp(env, app.id, { ...set, ...billingColumns(outcome.state) }, expect, retire),
    after: retire ? [retireRowStatement(env, retire, runsInstance(app.id, columns.instanceId))] : [],
  });
}

/** Start is refused before anything runs when the wallet cannot pay a period that is due. */
export async function startRefusal(env: Env, app: AppRow, now: number): Promise<Billed> {
  const outcome = applyBilling(billingStateOf(app), { kind: "start", ...planPrice(app.plan) }, now, await walletBalance(env, app.accountId));
  return outcome.ok ? { ok: true } : outcome;
}
