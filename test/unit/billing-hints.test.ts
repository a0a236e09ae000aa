import { describe, expect, it } from "vitest";
import type { BillingView } from "../../src/billing/app-billing";
import { type BillingHints, billingHints } from "../../src/billing/hints";
import { renewalTime } from "../../src/billing/renewal";
import type { AppRow } from "../../src/apps/store";
import type { AppStatus } from "../../src/db/schema";

// Issue 13, "Where it shows": what each control does to billing, said before it is pressed
// (SPEC.md, App controls, "Billing effects" 1-6), and when a renewal falls due (rule 3).

const uncharged: BillingView = { charged: false, price: null, next_price: 1200, period_start: null, period_end: null, stopped_since: null, payment_due: false };
const paid: BillingView = {
  charged: true,
  price: 1200,
  next_price: 1200,
  period_start: "2030-01-31T10:00:00.000Z",
  period_end: "2030-02-28T10:00:00.000Z",
  stopped_since: null,
  payment_due: false,
};

describe("billingHints", () => {
  it.each<[string, AppStatus, string, BillingView, Partial<BillingHints>]>([
    [
      "rule 1: before the first deploy, Deploy says what it will charge; nothing to refund yet",
      "not_deployed", "lite", uncharged,
      {
        summary: "Not charged yet. The first deploy charges 1,200 DA for a month of the Lite plan.",
        deploy: "Deploy charges 1,200 DA now for the first month of the Lite plan, before the build starts.",
        delete: "Nothing has been charged for this app, so there is nothing to refund.",
        warning: null,
      },
    ],
    [
      "rule 1 with rule 5: the first deploy is charged at the plan chosen now",
      "not_deployed", "pro", { ...uncharged, next_price: 6000 },
      { deploy: "Deploy charges 6,000 DA now for the first month of the Pro plan, before the build starts." },
    ],
    [
      "rule 2: redeploy and restart charge nothing",
      "running", "lite", paid,
      {
        summary: "1,200 DA paid for the period 2030-01-31 to 2030-02-28; it renews then at 1,200 DA.",
        deploy: "Redeploy charges nothing.",
        restart: "Restart charges nothing.",
        warning: null,
      },
    ],
    [
      "rule 3: Stop says nothing is charged while stopped",
      "running", "lite", paid,
      { stop: "While stopped, nothing is charged: the paid period's end moves later by exactly the time stopped." },
    ],
    [
      "rule 4: Start says the period's end moves by the time stopped",
      "stopped", "lite", { ...paid, stopped_since: "2030-02-10T00:00:00.000Z" },
      {
        start: "Start charges nothing: the paid period's end moves later by the time the app was stopped.",
        summary: "1,200 DA paid for the period from 2030-01-31; stopped since 2030-02-10, so the period's end moves later by the time stopped.",
      },
    ],
    [
      "rule 5: Change plan says the new price applies from the next cycle, and on which date",
      "running", "starter", { ...paid, next_price: 2500 },
      {
        plan: "Nothing is charged or refunded now; the new plan's price applies from the next billing cycle, on 2030-02-28.",
        summary: "1,200 DA paid for the period 2030-01-31 to 2030-02-28; it renews then at 2,500 DA.",
      },
    ],
    [
      "rule 6: Delete's confirmation says the paid remainder is not refunded",
      "running", "lite", paid,
      { delete: "Billing ends at once. The paid remainder (until 2030-02-28) is not refunded." },
    ],
    [
      "rule 1: a first deploy that failed stays charged, and the page says so",
      "failed", "lite", paid,
      { warning: "The first month (1,200 DA) was charged when Deploy was pressed; the paid period started then and runs until 2030-02-28 although the deploy failed." },
    ],
    [
      "renewal: stopped for payment due, Start charges a fresh month",
      "stopped", "lite", { ...paid, stopped_since: "2030-02-28T10:00:01.000Z", payment_due: true },
      {
        start: "Start charges 1,200 DA for a fresh month of the Lite plan from that moment.",
        warning: "Stopped: payment due. The renewal on 2030-02-28 could not be paid; Start charges 1,200 DA for a fresh month from then.",
      },
    ],
  ])("%s", (_name, status, plan, billing, expected) => {
    expect(billingHints({ status, plan, billing })).toMatchObject(expected);
  });
});

describe("billingHints after the paid period (deploys and starts cannot skip a payment)", () => {
  const after = Date.parse("2030-03-10T00:00:00.000Z");
  it("a deploy of a stopped app builds only and charges nothing", () => {
    const stopped = { ...paid, stopped_since: "2030-02-10T00:00:00.000Z" };
    expect(billingHints({ status: "stopped", plan: "lite", billing: stopped }, after).deploy).toBe(
      "Redeploy builds the new version and keeps the app stopped; nothing is charged. Start runs it.",
    );
    expect(billingHints({ status: "stopped", plan: "lite", billing: stopped }, after).start).toBe(
      "Start charges nothing: the paid period's end moves later by the time the app was stopped.",
    );
  });
  it("a failed app whose period ended: Redeploy charges one fresh month from then", () => {
    expect(billingHints({ status: "failed", plan: "lite", billing: paid }, after).deploy).toBe(
      "Redeploy charges 1,200 DA for a fresh month of the Lite plan from that moment: the paid period ended on 2030-02-28.",
    );
  });
  it("an app stopped after its period ended: Start charges one fresh month from then", () => {
    const late = { ...paid, stopped_since: "2030-03-01T00:00:00.000Z" };
    expect(billingHints({ status: "stopped", plan: "lite", billing: late }, after).start).toBe(
      "Start charges 1,200 DA for a fresh month of the Lite plan from that moment: the paid period ended on 2030-02-28.",
    );
  });
});

describe("renewalTime", () => {
  const base = { status: "running", billingCharged: true, periodEnd: 1000, stoppedSince: null } as AppRow;
  it.each<[string, Partial<AppRow>, number | null]>([
    ["renewal: a running, charged app renews at the end of its period", {}, 1000],
    ["rule 3: a stopped app does not renew", { status: "stopped", stoppedSince: 500 }, null],
    ["rule 1: an app never charged has no period to renew", { billingCharged: false, periodEnd: null }, null],
    ["renewal: an app whose first deploy failed is not running and does not renew", { status: "failed" }, null],
  ])("%s", (_name, change, expected) => {
    expect(renewalTime({ ...base, ...change })).toBe(expected);
  });
});
