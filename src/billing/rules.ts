import { addOneMonth } from "./period";

/**
 * docs/billing.md, rules 1-6 and the renewal, as one pure function
 * of (app billing state, event, now, wallet balance). Money is whole DA, integers only.
 */

export interface BillingState {
  /** Whether the app was ever charged (rule 1: at its first deploy, not at creation). */
  charged: boolean;
  periodStart: number | null;
  periodEnd: number | null;
  /** Set while the app is stopped (rule 3: no renewal while stopped). */
  stoppedSince: number | null;
  /** The app was stopped because a renewal could not be paid: Start charges a fresh period. */
  paymentDue: boolean;
  /** Price paid for the current period. */
  paidPrice: number | null;
}

export const UNCHARGED: BillingState = { charged: false, periodStart: null, periodEnd: null, stoppedSince: null, paymentDue: false, paidPrice: null };

export type BillingEvent =
  /**
   * Deploy pressed. `app`: `running` (the new version replaces a serving one), `stopped` (it is
   * built only; the app stays stopped), `idle` (never ran, or its first deploy failed: it will run).
   */
  | { kind: "deploy"; price: number; planLabel: string; app: "running" | "stopped" | "idle" }
  | { kind: "redeploy" }
  | { kind: "restart" }
  | { kind: "stop" }
  | { kind: "start"; price: number; planLabel: string }
  | { kind: "change_plan" }
  | { kind: "delete" }
  | { kind: "renew"; price: number; planLabel: string };

export interface Charge {
  amount: number;
  periodStart: number;
  periodEnd: number;
  description: string;
}

export type BillingOutcome =
  | { ok: true; state: BillingState; charge: Charge | null; stopForPayment?: true }
  | { ok: false; code: "INSUFFICIENT_FUNDS"; message: string };

/** An amount as the console and the refusals say it: `1,200 DA`. */
export const formatDa = (n: number) => `${n.toLocaleString("en-US")} DA`;

/** Rule 1's refusal, word for word from the issue. */
export function insufficientFundsMessage(balance: number, price: number, planLabel: string): string {
  return `Your wallet holds ${formatDa(balance)}; the first month of the ${planLabel} plan costs ${formatDa(price)}.`;
}

function freshPeriod(state: BillingState, now: number, price: number, description: string): BillingOutcome {
  const periodEnd = addOneMonth(now);
  return {
    ok: true,
    state: { ...state, charged: true, periodStart: now, periodEnd, stoppedSince: null, paymentDue: false, paidPrice: price },
    charge: { amount: price, periodStart: now, periodEnd, description },
  };
}

/** A month's refusal after the first: the wallet does not cover a fresh period. */
const monthMessage = (balance: number, price: number, planLabel: string) =>
  `Your wallet holds ${formatDa(balance)}; a month of the ${planLabel} plan costs ${formatDa(price)}.`;

/**
 * Whether the paid period is over at `now`, the time stopped counted as rule 4 does (a stopped
 * app's end moves later while it is stopped, so only one stopped after its end has passed).
 */
export function periodEnded(state: BillingState, now: number): boolean {
  if (!state.charged || state.periodEnd === null) return false;
  const end = state.stoppedSince === null ? state.periodEnd : state.periodEnd + Math.max(0, now - state.stoppedSince);
  return end <= now;
}

/** One fresh month from `now`, like a first deploy; refused (nothing moves) without the funds. */
function fresh(
  state: BillingState,
  event: { price: number; planLabel: string },
  balance: number,
  now: number,
  description: string,
  refusal: (balance: number, price: number, planLabel: string) => string,
): BillingOutcome {
  if (balance < event.price) return { ok: false, code: "INSUFFICIENT_FUNDS", message: refusal(balance, event.price, event.planLabel) };
  return freshPeriod(state, now, event.price, description);
}

export function applyBilling(state: BillingState, event: BillingEvent, now: number, balance: number): BillingOutcome {
  const unchanged: BillingOutcome = { ok: true, state, charge: null };
  switch (event.kind) {
    case "deploy": // rule 1, then rule 2 for every deploy after the first charge
      if (event.app === "stopped") return unchanged; // built only: nothing runs, nothing is charged
      if (!state.charged) return fresh(state, event, balance, now, `First month of the ${event.planLabel} plan`, insufficientFundsMessage);
      // A deploy that would run an app whose paid period has ended: one fresh month from now, never past ones.
      if (event.app === "idle" && periodEnded(state, now)) return fresh(state, event, balance, now, `A month of the ${event.planLabel} plan, from a deploy after the paid period ended`, monthMessage);
      return unchanged;
    case "redeploy": // rule 2
    case "restart":
    case "change_plan": // rule 5: the new price applies from the next cycle
    case "delete": // rule 6: no refund
      return unchanged;
    case "stop": // rule 3
      return state.charged && state.stoppedSince === null ? { ok: true, state: { ...state, stoppedSince: now }, charge: null } : unchanged;
    case "start": {
      if (!state.charged) return unchanged; // rule 4: never charged, no period to move
      if (state.paymentDue) return fresh(state, event, balance, now, `A month of the ${event.planLabel} plan, restarted after payment was due`, monthMessage);
      if (periodEnded(state, now)) return fresh(state, event, balance, now, `A month of the ${event.planLabel} plan, from a start after the paid period ended`, monthMessage);
      if (state.stoppedSince === null || state.periodEnd === null) return unchanged;
      // Rule 4: the end moves by exactly the time stopped; the start does not move.
      return { ok: true, state: { ...state, periodEnd: state.periodEnd + Math.max(0, now - state.stoppedSince), stoppedSince: null }, charge: null };
    }
    case "renew": {
      if (!state.charged || state.stoppedSince !== null || state.periodEnd === null || now < state.periodEnd) return unchanged;
      if (balance < event.price) return { ok: true, state: { ...state, stoppedSince: now, paymentDue: true }, charge: null, stopForPayment: true };
      // The next period starts where the last one ended, so none overlaps it; one whole month
      // late (the alarm could not run), it starts now: a past month is never charged.
      const periodStart = now >= addOneMonth(state.periodEnd) ? now : state.periodEnd;
      const periodEnd = addOneMonth(periodStart);
      return {
        ok: true,
        state: { ...state, periodStart, periodEnd, paidPrice: event.price },
        charge: { amount: event.price, periodStart, periodEnd, description: `Renewal of the ${event.planLabel} plan` },
      };
    }
  }
}
