import type { AppRow } from "../apps/store";

/**
 * Renewal (docs/billing.md): at the end of a paid period a running app is charged the
 * current plan's price for the next period, which starts where the last one ended. Run by the
 * app's AppController alarm (src/apps/paid-changes.ts renewIfDue). Exactly once: a second run
 * finds the period already moved on, and the ledger's unique (app, period start) index refuses a
 * second charge of one period.
 */

/** How long a renewal that falls due while a change is in flight waits before it is tried again. */
export const RENEWAL_RETRY_MS = 30_000;

/** When the app's paid period ends and a renewal is due: only a running, charged app renews (rule 3). */
export function renewalTime(app: AppRow): number | null {
  if (app.status !== "running" || !app.billingCharged || app.stoppedSince !== null || app.periodEnd === null) return null;
  return app.periodEnd;
}
