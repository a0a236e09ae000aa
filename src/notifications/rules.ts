/**
 * The alert rules (docs/alerts.md, "Events"), pure and table-tested in
 * test/unit/notification-rules.test.ts: when an incident opens and closes, when memory, errors,
 * a crash and the wallet count as an incident, and the delivery retry schedule.
 */

/** What to do with an incident given whether it is open and whether its condition holds now. */
export type IncidentStep = "open" | "close" | "stay";

/** An incident opens (its event is sent) when its condition starts to hold, and closes when it clears; nothing in between. */
export function incidentStep(open: boolean, holds: boolean): IncidentStep {
  if (holds && !open) return "open";
  if (!holds && open) return "close";
  return "stay";
}

/** app.memory_high: memory above this share of the plan's limit... */
export const MEMORY_HIGH_RATIO = 0.9;
/** ...in every sample for this long. */
export const MEMORY_HIGH_MS = 5 * 60_000;

/**
 * One memory sample: `since` is when the current run of samples above 90 % of the limit began
 * (null: the last sample was below); the condition holds once that run has lasted 5 minutes. A
 * sample without a reading keeps the run as it was.
 */
export function memoryStep(since: number | null, sample: { memoryBytes: number | null; limitBytes: number; now: number }): { since: number | null; holds: boolean } {
  if (sample.memoryBytes === null) return { since, holds: since !== null && sample.now - since >= MEMORY_HIGH_MS };
  if (sample.memoryBytes <= sample.limitBytes * MEMORY_HIGH_RATIO) return { since: null, holds: false };
  const start = since ?? sample.now;
  return { since: start, holds: sample.now - start >= MEMORY_HIGH_MS };
}

/** app.errors_high: at least this many requests in the window... */
export const ERRORS_MIN_REQUESTS = 20;
/** ...more than this percentage of them 5xx... */
export const ERRORS_HIGH_PERCENT = 5;
/** ...over the last 5 minutes (the current minute and the four before it). */
export const ERRORS_WINDOW_MINUTES = 5;

/** Whether the minute rows (`at`: minute start, Unix seconds) of the window ending at `nowSeconds` hold too many 5xx answers. */
export function errorsHigh(rows: readonly { at: number; total: number; errors: number }[], nowSeconds: number): boolean {
  const from = Math.floor(nowSeconds / 60) * 60 - (ERRORS_WINDOW_MINUTES - 1) * 60;
  let total = 0;
  let errors = 0;
  for (const row of rows) {
    if (row.at < from || row.at > nowSeconds) continue;
    total += row.total;
    errors += row.errors;
  }
  return total >= ERRORS_MIN_REQUESTS && errors * 100 > total * ERRORS_HIGH_PERCENT;
}

/** app.crashed stays open until the instance has run this long without a restart. */
export const CRASH_QUIET_MS = 10 * 60_000;

/**
 * One look at the serving instance: it crashed when the engine gave up on it (`crashed`) or
 * restarted it since the last look (its restart count rose, or it is another instance that was
 * already restarted). `lastCrashAt` is carried between looks; the condition clears after
 * CRASH_QUIET_MS without one.
 */
export function crashStep(
  lastCrashAt: number | null,
  look: { state: "running" | "restarting" | "crashed"; restarts: number; previousRestarts: number | null; now: number },
): { lastCrashAt: number | null; holds: boolean } {
  const restarted = look.restarts > (look.previousRestarts ?? 0);
  if (look.state !== "running" || restarted) return { lastCrashAt: look.now, holds: true };
  if (lastCrashAt !== null && look.now - lastCrashAt < CRASH_QUIET_MS) return { lastCrashAt, holds: true };
  return { lastCrashAt: null, holds: false };
}

/** wallet.low: the balance is below what the renewals due within this many days will take. */
export const WALLET_LOW_DAYS = 7;

/** Whether a balance (cents) is below the renewals (cents each) due within WALLET_LOW_DAYS. */
export function walletLow(balanceCents: number, dueCents: readonly number[]): boolean {
  const due = dueCents.reduce((sum, cents) => sum + cents, 0);
  return due > 0 && balanceCents < due;
}

/** Seconds to wait after each failed try: 6 tries over about 66 minutes. */
export const RETRY_DELAYS_SECONDS = [10, 60, 300, 900, 2700] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** The wait before the next try after `attempts` tries failed; null when that was the last try. */
export function retryDelay(attempts: number): number | null {
  if (attempts < 1 || attempts >= MAX_ATTEMPTS) return null;
  return RETRY_DELAYS_SECONDS[attempts - 1]!;
}

/** Whether an HTTP answer counts as delivered (2xx); redirects are not followed, so a 3xx fails. */
export function delivered(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * domain.error: a custom domain that served (verifying or active) moves to `error` (its DNS no
 * longer points here, the provider refused it, a lookup failed); the incident closes when it is
 * active again. A new claim still waiting for its DNS is not an incident.
 */
export function domainIncident(from: string, to: string): "open" | "close" | null {
  if (to === "error" && (from === "active" || from === "verifying")) return "open";
  if (to === "active" && from !== "active") return "close";
  return null;
}
