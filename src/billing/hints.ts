import { PLANS, type PlanId } from "../apps/plans";
import type { AppStatus } from "../db/schema";
import type { BillingView } from "./app-billing";
import { formatDa } from "./rules";

/**
 * What each app control will do to billing, said on the app page before it is pressed (issue 13,
 * "Where it shows"; docs/billing.md, rules 1-6). Pure: the page only prints it.
 * Dates are UTC calendar days, as the paid period is computed in UTC.
 */
export interface BillingHints {
  /** One line for the facts list: what is paid and until when. */
  summary: string;
  deploy: string;
  stop: string;
  start: string;
  restart: string;
  plan: string;
  delete: string;
  /** Said in red when it applies: stopped for payment due, or a first deploy that failed but was charged. */
  warning: string | null;
}

const day = (iso: string) => iso.slice(0, 10);
const label = (plan: string) => PLANS[plan as PlanId]?.label ?? plan;

export function billingHints(app: { status: AppStatus; plan: string; billing: BillingView }, now = Date.now()): BillingHints {
  const b = app.billing;
  const price = b.next_price;
  const plan = label(app.plan);
  if (!b.charged || b.period_end === null) {
    return {
      summary: `Not charged yet. The first deploy charges ${formatDa(price)} for a month of the ${plan} plan.`,
      // Rule 1: charged at the first deploy, not at creation.
      deploy: `Deploy charges ${formatDa(price)} now for the first month of the ${plan} plan, before the build starts.`,
      stop: "Nothing is charged for this app yet.",
      start: "Nothing is charged for this app yet.",
      restart: "Restart charges nothing.",
      plan: `Nothing is charged now; the first deploy is charged at the chosen plan's price.`,
      delete: "Nothing has been charged for this app, so there is nothing to refund.",
      warning: null,
    };
  }
  const until = day(b.period_end);
  const paid = b.price ?? price;
  // The paid period is over (rules.ts periodEnded): a deploy that runs the app, or a Start, charges a fresh month.
  const endMs = Date.parse(b.period_end);
  const ended = b.stopped_since === null ? endMs <= now : endMs <= Date.parse(b.stopped_since);
  const freshMonth = `charges ${formatDa(price)} for a fresh month of the ${plan} plan from that moment: the paid period ended on ${until}.`;
  const warning = b.payment_due
    ? `Stopped: payment due. The renewal on ${day(b.stopped_since ?? b.period_end)} could not be paid; Start charges ${formatDa(price)} for a fresh month from then.`
    : app.status === "failed"
      ? `The first month (${formatDa(paid)}) was charged when Deploy was pressed; the paid period started then and runs until ${until} although the deploy failed.`
      : null;
  return {
    summary: b.stopped_since
      ? `${formatDa(paid)} paid for the period from ${day(b.period_start!)}; stopped since ${day(b.stopped_since)}, so the period's end moves later by the time stopped.`
      : `${formatDa(paid)} paid for the period ${day(b.period_start!)} to ${until}; it renews then at ${formatDa(price)}.`,
    // Rule 2; a stopped app is built only; an app that is not running and whose period ended pays a fresh month.
    deploy:
      app.status === "stopped"
        ? "Redeploy builds the new version and keeps the app stopped; nothing is charged. Start runs it."
        : app.status !== "running" && ended
          ? `Redeploy ${freshMonth}`
          : "Redeploy charges nothing.",
    // Rule 3.
    stop: "While stopped, nothing is charged: the paid period's end moves later by exactly the time stopped.",
    // Rule 4, or a fresh period after payment was due.
    start: b.payment_due
      ? `Start charges ${formatDa(price)} for a fresh month of the ${plan} plan from that moment.`
      : ended
        ? `Start ${freshMonth}`
        : "Start charges nothing: the paid period's end moves later by the time the app was stopped.",
    restart: "Restart charges nothing.",
    // Rule 5.
    plan: `Nothing is charged or refunded now; the new plan's price applies from the next billing cycle, on ${until}.`,
    // Rule 6.
    delete: `Billing ends at once. The paid remainder (until ${until}) is not refunded.`,
    warning,
  };
}
