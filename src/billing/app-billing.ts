import type { apps } from "../db/schema";
import { PLANS, type PlanId } from "../apps/plans";
import type { BillingState } from "./rules";
import { iso } from "../lib/time";

/** The app record (apps/store.ts AppRow, named from the schema so that the store can import this module). */
type AppRow = typeof apps.$inferSelect;

/** The billing state kept on an app's record. */
export function billingStateOf(app: AppRow): BillingState {
  return {
    charged: app.billingCharged,
    periodStart: app.periodStart,
    periodEnd: app.periodEnd,
    stoppedSince: app.stoppedSince,
    paymentDue: app.paymentDue,
    paidPrice: app.paidPrice,
  };
}

/** The app columns for a billing state, for a D1 update. */
export function billingColumns(state: BillingState) {
  return {
    billingCharged: state.charged,
    periodStart: state.periodStart,
    periodEnd: state.periodEnd,
    stoppedSince: state.stoppedSince,
    paymentDue: state.paymentDue,
    paidPrice: state.paidPrice,
  };
}

/** The plan's price and label, as the billing events take them. */
export function planPrice(plan: string): { price: number; planLabel: string } {
  const p = PLANS[plan as PlanId] ?? PLANS.lite;
  return { price: p.priceDa, planLabel: p.label };
}

export interface BillingView {
  charged: boolean;
  /** Paid for the current period (null before the first charge). */
  price: number | null;
  /** What the next period will cost: the current plan's price (rule 5). */
  next_price: number;
  period_start: string | null;
  period_end: string | null;
  stopped_since: string | null;
  payment_due: boolean;
}

export function viewBilling(app: AppRow): BillingView {
  const at = (ms: number | null) => (ms === null ? null : iso(ms));
  return {
    charged: app.billingCharged,
    price: app.paidPrice,
    next_price: planPrice(app.plan).price,
    period_start: at(app.periodStart),
    period_end: at(app.periodEnd),
    stopped_since: at(app.stoppedSince),
    payment_due: app.paymentDue,
  };
}
