import { describe, expect, it } from "vitest";
import { type BillingEvent, type BillingOutcome, type BillingState, UNCHARGED, applyBilling } from "../../src/billing/rules";

// SPEC.md, App controls, "Billing effects" 1-6, and issue 13's renewal rule.
const T0 = Date.parse("2030-01-31T10:00:00.000Z");
const FEB_END = Date.parse("2030-02-28T10:00:00.000Z");
const DAY = 86_400_000;
const lite = { price: 1200, planLabel: "Lite" };
const paid: BillingState = { charged: true, periodStart: T0, periodEnd: FEB_END, stoppedSince: null, paymentDue: false, paidPrice: 1200 };
const same = (state: BillingState): BillingOutcome => ({ ok: true, state, charge: null });

describe("applyBilling", () => {
  it.each<[string, BillingState, BillingEvent, number, number, BillingOutcome]>([
    [
      "rule 1: the first deploy charges the full plan price and starts a month",
      UNCHARGED, { kind: "deploy", ...lite, app: "idle" }, T0, 5000,
      { ok: true, state: paid, charge: { amount: 1200, periodStart: T0, periodEnd: FEB_END, description: "First month of the Lite plan" } },
    ],
    [
      "rule 1: exactly enough money is enough",
      UNCHARGED, { kind: "deploy", ...lite, app: "idle" }, T0, 1200,
      { ok: true, state: paid, charge: { amount: 1200, periodStart: T0, periodEnd: FEB_END, description: "First month of the Lite plan" } },
    ],
    [
      "rule 1: a wallet that cannot cover it refuses the deploy, no money moves",
      UNCHARGED, { kind: "deploy", ...lite, app: "idle" }, T0, 1199,
      { ok: false, code: "INSUFFICIENT_FUNDS", message: "Your wallet holds 1,199 DA; the first month of the Lite plan costs 1,200 DA." },
    ],
    ["rule 2: a deploy after the first charge costs nothing", paid, { kind: "deploy", ...lite, app: "running" }, T0 + DAY, 0, same(paid)],
    ["rule 2: a deploy of a failed app inside its paid period costs nothing", paid, { kind: "deploy", ...lite, app: "idle" }, FEB_END - 1, 0, same(paid)],
    [
      "deploy on a stopped app builds only and charges nothing, even after its period (nothing runs)",
      { ...paid, stoppedSince: FEB_END, paymentDue: true }, { kind: "deploy", ...lite, app: "stopped" }, FEB_END + 40 * DAY, 0,
      same({ ...paid, stoppedSince: FEB_END, paymentDue: true }),
    ],
    [
      "a deploy that would run an app whose paid period ended charges one fresh month from now, never past months",
      paid, { kind: "deploy", ...lite, app: "idle" }, FEB_END + 90 * DAY, 5000,
      {
        ok: true,
        state: { ...paid, periodStart: FEB_END + 90 * DAY, periodEnd: Date.parse("2030-06-29T10:00:00.000Z") },
        charge: { amount: 1200, periodStart: FEB_END + 90 * DAY, periodEnd: Date.parse("2030-06-29T10:00:00.000Z"), description: "A month of the Lite plan, from a deploy after the paid period ended" },
      },
    ],
    [
      "a deploy that would run an app whose paid period ended, without funds: 402, nothing moves",
      paid, { kind: "deploy", ...lite, app: "idle" }, FEB_END, 1199,
      { ok: false, code: "INSUFFICIENT_FUNDS", message: "Your wallet holds 1,199 DA; a month of the Lite plan costs 1,200 DA." },
    ],
    [
      "a start of an app stopped after its paid period ended charges one fresh month from now",
      { ...paid, stoppedSince: FEB_END + DAY }, { kind: "start", ...lite }, FEB_END + 3 * DAY, 1200,
      {
        ok: true,
        state: { ...paid, periodStart: FEB_END + 3 * DAY, periodEnd: Date.parse("2030-04-03T10:00:00.000Z") },
        charge: { amount: 1200, periodStart: FEB_END + 3 * DAY, periodEnd: Date.parse("2030-04-03T10:00:00.000Z"), description: "A month of the Lite plan, from a start after the paid period ended" },
      },
    ],
    [
      "a start of an app stopped after its paid period ended, without funds: 402, nothing moves",
      { ...paid, stoppedSince: FEB_END + DAY }, { kind: "start", ...lite }, FEB_END + 3 * DAY, 0,
      { ok: false, code: "INSUFFICIENT_FUNDS", message: "Your wallet holds 0 DA; a month of the Lite plan costs 1,200 DA." },
    ],
    ["rule 2: redeploy, no charge, no refund", paid, { kind: "redeploy" }, T0 + DAY, 0, same(paid)],
    ["rule 2: restart, no charge, no refund", paid, { kind: "restart" }, T0 + DAY, 0, same(paid)],
    ["rule 3: stop starts the stopped clock", paid, { kind: "stop" }, T0 + DAY, 0, same({ ...paid, stoppedSince: T0 + DAY })],
    ["rule 3: no renewal while stopped", { ...paid, stoppedSince: T0 + DAY }, { kind: "renew", ...lite }, FEB_END + 1, 5000, same({ ...paid, stoppedSince: T0 + DAY })],
    [
      "rule 4: start moves the end by exactly the time stopped, not the start",
      { ...paid, stoppedSince: T0 + DAY }, { kind: "start", ...lite }, T0 + 4 * DAY + 7, 0,
      same({ ...paid, periodEnd: FEB_END + 3 * DAY + 7 }),
    ],
    ["rule 4: an app never charged has no period to move", { ...UNCHARGED }, { kind: "start", ...lite }, T0, 0, same(UNCHARGED)],
    ["rule 5: change plan charges and refunds nothing now", paid, { kind: "change_plan" }, T0 + DAY, 0, same(paid)],
    ["rule 6: delete refunds nothing", paid, { kind: "delete" }, T0 + DAY, 0, same(paid)],
    ["renewal: not before the period ends", paid, { kind: "renew", ...lite }, FEB_END - 1, 5000, same(paid)],
    [
      "renewal: at the end, the current plan's price for the next month (rule 5's new price)",
      paid, { kind: "renew", price: 2500, planLabel: "Starter" }, FEB_END, 5000,
      {
        ok: true,
        state: { ...paid, periodStart: FEB_END, periodEnd: Date.parse("2030-03-28T10:00:00.000Z"), paidPrice: 2500 },
        charge: { amount: 2500, periodStart: FEB_END, periodEnd: Date.parse("2030-03-28T10:00:00.000Z"), description: "Renewal of the Starter plan" },
      },
    ],
    [
      "renewal: a whole month late (the alarm could not run), the period starts now; no past month, no overlap",
      paid, { kind: "renew", ...lite }, Date.parse("2030-04-01T10:00:00.000Z"), 5000,
      {
        ok: true,
        state: { ...paid, periodStart: Date.parse("2030-04-01T10:00:00.000Z"), periodEnd: Date.parse("2030-05-01T10:00:00.000Z") },
        charge: { amount: 1200, periodStart: Date.parse("2030-04-01T10:00:00.000Z"), periodEnd: Date.parse("2030-05-01T10:00:00.000Z"), description: "Renewal of the Lite plan" },
      },
    ],
    [
      "renewal: a wallet that cannot cover it stops the app, payment due",
      paid, { kind: "renew", ...lite }, FEB_END, 100,
      { ok: true, state: { ...paid, stoppedSince: FEB_END, paymentDue: true }, charge: null, stopForPayment: true },
    ],
    [
      "renewal: start after payment was due charges a fresh full period from now",
      { ...paid, stoppedSince: FEB_END, paymentDue: true }, { kind: "start", ...lite }, FEB_END + 2 * DAY, 1200,
      {
        ok: true,
        state: { ...paid, periodStart: FEB_END + 2 * DAY, periodEnd: Date.parse("2030-04-02T10:00:00.000Z") },
        charge: { amount: 1200, periodStart: FEB_END + 2 * DAY, periodEnd: Date.parse("2030-04-02T10:00:00.000Z"), description: "A month of the Lite plan, restarted after payment was due" },
      },
    ],
    [
      "renewal: start after payment was due, without funds, is refused",
      { ...paid, stoppedSince: FEB_END, paymentDue: true }, { kind: "start", ...lite }, FEB_END + 2 * DAY, 10,
      { ok: false, code: "INSUFFICIENT_FUNDS", message: "Your wallet holds 10 DA; a month of the Lite plan costs 1,200 DA." },
    ],
  ])("%s", (_name, state, event, now, balance, expected) => {
    expect(applyBilling(state, event, now, balance)).toEqual(expected);
  });
});
