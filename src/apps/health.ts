import type { HealthCheckSpec } from "../runtime/types";
import type { HealthCheckSettings, HealthExpect, HealthRecord, HealthState } from "../db/health-columns";

/**
 * An app's health check: its settings (path, expected answer, timeout, grace period at start), the
 * rules that judge one probe, and the state the controller keeps between its periodic checks.
 * Pure: the probe itself is in probe.ts, the periodic check in health-check.ts.
 */

export { HEALTH_EXPECTS, type HealthCheckSettings, type HealthExpect, type HealthRecord, type HealthState } from "../db/health-columns";

/** The settings an app has until it changes them: any answer on `/`, as the deploy probe always did. */
export const DEFAULT_HEALTH_CHECK: HealthCheckSettings = { path: "/", expect: "any", timeoutSeconds: 5, graceSeconds: 10 };

/** Bounds of the settings (README, Health checks). */
export const HEALTH_BOUNDS = {
  pathMaxLength: 255,
  timeoutSeconds: { min: 1, max: 60 },
  graceSeconds: { min: 0, max: 600 },
} as const;

/** Failures in a row, outside the grace period, after which the instance is restarted. */
export const HEALTH_FAILURES_TO_RESTART = 3;

/** The app's settings, or the defaults when it never set them. */
export function healthSettings(stored: HealthCheckSettings | null | undefined): HealthCheckSettings {
  return stored ?? DEFAULT_HEALTH_CHECK;
}

/** Characters a path may hold (RFC 3986 pchar, `/` and `?`): no spaces, backslashes, fragments. */
const PATH_CHARS = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]*$/;

/**
 * Why a health check path is refused, or null: a path on the app only (starting with `/`, not
 * `//`), no full address, no `.` or `..` segment (also percent-encoded), at most 255 characters.
 */
export function healthPathProblem(path: string): string | null {
  if (path.length === 0) return "Give a path such as / or /healthz.";
  if (path.length > HEALTH_BOUNDS.pathMaxLength) return `The path is longer than ${HEALTH_BOUNDS.pathMaxLength} characters.`;
  if (!path.startsWith("/") || path.startsWith("//")) return "Give a path on the app starting with / (such as /healthz), not a full address.";
  if (!PATH_CHARS.test(path)) return "The path may hold only letters, digits and - . _ ~ ! $ & ' ( ) * + , ; = : @ % / ? (no spaces or #).";
  const pathname = path.split("?")[0]!;
  const segments = pathname.split("/").map((s) => s.replace(/%2e/gi, "."));
  if (segments.some((s) => s === "." || s === "..")) return "The path may not hold . or .. segments.";
  if (/%(?![0-9a-fA-F]{2})/.test(path)) return "The path holds a % that is not followed by two hex digits.";
  if (/%2f|%5c/i.test(pathname)) return "The path may not hold an encoded / or \\.";
  return null;
}

/** The address probed: the instance's own origin with the path; null when it would leave that origin. */
export function healthUrl(instanceUrl: string, path: string): string | null {
  if (healthPathProblem(path) !== null) return null;
  try {
    const base = new URL(instanceUrl);
    const url = new URL(`${base.origin}${path}`);
    return url.origin === base.origin ? url.href : null;
  } catch {
    return null;
  }
}

/** Whether an HTTP status is the answer the app expects. A redirect is never followed: 3xx is the answer. */
export function expectMatches(expect: HealthExpect, status: number): boolean {
  if (!Number.isInteger(status) || status < 100 || status > 599) return false;
  return expect === "any" || (status >= 200 && status < 400);
}

/** Whether a failure at `now` falls in the grace period of an instance (re)started at `since`. */
export function inGrace(since: number, graceSeconds: number, now: number): boolean {
  return now < since + graceSeconds * 1000;
}

/** What one probe found. `status`: the HTTP answer; `timeout`: none in time; `error`: no HTTP answer at all. */
export type ProbeResult = { kind: "status"; status: number } | { kind: "timeout" } | { kind: "error" };

/**
 * The sentence recorded for a failed probe: the path and the status, or what went wrong, never the
 * answer's body or headers (they may hold the app's secrets) nor the instance's address.
 */
export function failureMessage(settings: Pick<HealthCheckSettings, "path" | "expect" | "timeoutSeconds">, result: ProbeResult): string | null {
  if (result.kind === "status") return expectMatches(settings.expect, result.status) ? null : `${settings.path} answered HTTP ${result.status} (expected 2xx-3xx).`;
  if (result.kind === "timeout") return `${settings.path} did not answer within ${settings.timeoutSeconds} s.`;
  return `${settings.path} gave no HTTP answer: the connection was refused or reset.`;
}

export type HealthEvent =
  /** One probe of the serving instance `instanceId` at `now`; `failure` null when it was healthy. */
  | { kind: "probe"; instanceId: string; now: number; failure: string | null }
  /** The instance was restarted in place at `now`: the grace period begins again. */
  | { kind: "restarted"; now: number }
  /** A restart was tried and failed (a crash-looping process): recorded as the last failure. */
  | { kind: "restart_failed"; now: number; message: string };

/**
 * The health state machine. A healthy probe makes the instance healthy and clears the count; a
 * failure outside the grace period adds one, and at HEALTH_FAILURES_TO_RESTART in a row the
 * instance is unhealthy and `restart` is asked for (again on each later failure while it stays
 * so: a restart refused because another change was in flight waits for the next check). A probe
 * of another instance (a deploy, a start, a plan change switched the app) starts afresh.
 */
export function stepHealth(record: HealthRecord | null, event: HealthEvent, graceSeconds: number): { record: HealthRecord | null; restart: boolean } {
  if (event.kind === "probe") {
    const current: HealthRecord =
      record && record.instanceId === event.instanceId ? record : { instanceId: event.instanceId, since: event.now, failures: 0, state: "unknown", lastFailure: null };
    if (event.failure === null) return { record: { ...current, failures: 0, state: "healthy" }, restart: false };
    const lastFailure = { at: event.now, message: event.failure };
    if (inGrace(current.since, graceSeconds, event.now)) return { record: { ...current, lastFailure }, restart: false };
    const failures = current.failures + 1;
    const unhealthy = failures >= HEALTH_FAILURES_TO_RESTART;
    return { record: { ...current, failures, lastFailure, state: unhealthy ? "unhealthy" : current.state }, restart: unhealthy };
  }
  if (!record) return { record, restart: false };
  if (event.kind === "restarted") return { record: { ...record, since: event.now, failures: 0 }, restart: false };
  return { record: { ...record, lastFailure: { at: event.now, message: event.message } }, restart: false };
}

export interface HealthView {
  state: HealthState;
  last_failure: { at: string; message: string } | null;
}

/**
 * The app JSON's `health`: `unknown` unless the app is running and its serving instance has been
 * checked (a stopped app is not checked; a new instance is unknown until its first check).
 */
export function viewHealth(app: { status: string; instanceId: string | null; health: HealthRecord | null }): HealthView {
  const record = app.health;
  if (app.status !== "running" || !app.instanceId || !record || record.instanceId !== app.instanceId) return { state: "unknown", last_failure: null };
  return {
    state: record.state,
    last_failure: record.lastFailure ? { at: new Date(record.lastFailure.at).toISOString(), message: record.lastFailure.message } : null,
  };
}

/** The app JSON's `health_check`: the settings in the PATCH body's words. */
export function viewHealthCheck(stored: HealthCheckSettings | null | undefined) {
  const s = healthSettings(stored);
  return { path: s.path, expect: s.expect, timeout_seconds: s.timeoutSeconds, grace_seconds: s.graceSeconds };
}

/**
 * The check as an engine that checks health itself is given it (InstanceSpec.healthCheck: the
 * Swarm adapter's HEALTHCHECK); the Docker adapter leaves it to the controller's own probe.
 */
export function engineHealthCheck(settings: HealthCheckSettings, intervalSeconds = 30): HealthCheckSpec {
  return { ...settings, intervalSeconds, retries: HEALTH_FAILURES_TO_RESTART };
}
