/**
 * Saving a variable set (docs/envvars.md, rules 6 and 7): what its answer says. The save and the
 * switch to an instance with the new set are the app controller's (src/apps/env-apply.ts).
 */

export const ENV_CHANGED_MESSAGE = "Environment variables changed. Refresh and re-apply your changes.";
/** A set whose new instance has not taken over by then is recorded as failed (its run was lost). */
export const ENV_APPLY_DEADLINE_MS = 10 * 60 * 1000;

/** `stored`: kept for the next deploy; `applying`: a new instance is taking over; `unchanged`: identical. */
export type EnvEffect = "stored" | "applying" | "unchanged";

export type EnvSaveResult =
  | { outcome: "saved"; version: number; effect: EnvEffect }
  | { outcome: "refused"; code: "ENV_CHANGED" | "DEPLOY_IN_PROGRESS" | "NOT_FOUND"; message: string };

/**
 * Runs the switch to a new instance; settles once it is over, whatever happened (it never
 * rejects). The old instance's retire row lands with the switch; the controller's alarm drains it.
 */
export type EnvApplyRunner = () => Promise<void>;
