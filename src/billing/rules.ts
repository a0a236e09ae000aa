import { addOneMonth } from "./period";

/**
 * SPEC.md, App controls, "Billing effects" 1-6, and the renewal (issue 13), as one pure function
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
  | { kind: "deploy"; price: number; planLabel: string }
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

export function applyBilling(state: BillingState, event: BillingEvent, now: number, balance: number): BillingOutcome {
  const unchanged: BillingOutcome = { ok: true, state, charge: null };
  switch (event.kind) {
    case "deploy": // rule 1, then rule 2 for every deploy after the first charge
      if (state.charged) return unchanged;
      if (balance < event.price) return { ok: false, code: "INSUFFICIENT_FUNDS", message: insufficientFundsMessage(balance, event.price, event.planLabel) };
      return freshPeriod(state, now, event.price, `First month of the ${event.planLabel} plan`);
    case "redeploy": // rule 2
    case "restart":
    case "change_plan": // rule 5: the new price applies from the next cycle
    case "delete": // rule 6: no refund
      return unchanged;
    case "stop": // rule 3
      return state.charged && state.stoppedSince === null ? { ok: true, state: { ...state, stoppedSince: now }, charge: null } : unchanged;
    case "start": {
      if (!state.charged) return unchanged; // rule 4: never charged, no period to move
      if (state.paymentDue) {
        if (balance < event.price) return { ok: false, code: "INSUFFICIENT_FUNDS", message: `Your wallet holds ${formatDa(balance)}; a month of the ${event.planLabel} plan costs ${formatDa(event.price)}.` };
        return freshPeriod(state, now, event.price, `A month of the ${event.planLabel} plan, restarted after payment was due`);
      }
      if (state.stoppedSince === null || state.periodEnd === null) return unchanged;
      // Rule 4: the end moves by exactly the time stopped; the start does not move.
      return { ok: true, state: { ...state, periodEnd: state.periodEnd + Math.max(0, now - state.stoppedSince), stoppedSince: null }, charge: null };
    }
    case "renew": {
      if (!state.charged || state.stoppedSince !== null || state.periodEnd === null || now < state.periodEnd) return unchanged;
      if (balance < event.price) return { ok: true, state: { ...state, stoppedSince: now, paymentDue: true }, charge: null, stopForPayment: true };
      const periodStart = state.periodEnd;
      const periodEnd = addOneMonth(periodStart);
      return {
        ok: true,
        state: { ...state, periodStart, periodEnd, paidPrice: event.price },
        charge: { amount: event.price, periodStart, periodEnd, description: `Renewal of the ${event.planLabel} plan` },
      };
    }
  }
}
