/**
 * The shapes of an app's two health columns (`apps.health_check`, `apps.health`), kept beside the
 * schema that stores them; the rules that fill them are in src/apps/health.ts.
 */

/** What an app asks of its instance's HTTP answer. */
export const HEALTH_EXPECTS = ["any", "2xx-3xx"] as const;
export type HealthExpect = (typeof HEALTH_EXPECTS)[number];

export interface HealthCheckSettings {
  /** Path (and optional query) probed on the instance's port; never a full address. */
  path: string;
  /** `any`: any HTTP answer is healthy (a 404 still shows the process listens); `2xx-3xx`: only those. */
  expect: HealthExpect;
  /** One probe may take this long before it counts as failed. */
  timeoutSeconds: number;
  /** Failures this long after the instance (re)started do not count. */
  graceSeconds: number;
}

export type HealthState = "healthy" | "unhealthy" | "unknown";

/** What the controller keeps of its checks of the app's serving instance (the `apps.health` column). */
export interface HealthRecord {
  /** The instance these checks are of; another instance starts afresh. */
  instanceId: string;
  /** When that instance was first seen or last restarted: the grace period counts from here. */
  since: number;
  /** Failures in a row outside the grace period. */
  failures: number;
  state: HealthState;
  lastFailure: { at: number; message: string } | null;
}
