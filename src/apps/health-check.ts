import { describeError, log } from "../http/log";
import { InstanceExitedError } from "../runtime/types";
import { appMetrics } from "../metrics/app-metrics";
import { notifyHealth } from "../notifications/hooks";
import type { ControlResult } from "./controls";
import { type HealthEvent, type HealthRecord, failureMessage, healthSettings, stepHealth } from "./health";
import { probeOnce } from "./probe";
import { recordHealth } from "./app-columns";
import type { AppRow } from "./store";

/**
 * One periodic check of a running app's serving instance, run by its AppController's alarm: the
 * Worker probes the instance itself with the app's health check (a FROM-scratch image has no curl
 * or wget for an engine HEALTHCHECK to run), records what it found, and after
 * HEALTH_FAILURES_TO_RESTART failures in a row asks `restart` (the controller's own Restart, under
 * its change mark: refused while another change is in flight, it waits for the next check).
 */
export async function checkAppHealth(env: Env, app: AppRow, now: number, restart: () => Promise<ControlResult>, options: { fetch?: typeof fetch } = {}): Promise<void> {
  if (app.status !== "running" || !app.instanceId || !app.instanceUrl) return;
  const settings = healthSettings(app.healthCheck);
  const result = await probeOnce(app.instanceUrl, settings, { fetch: options.fetch });
  const failure = failureMessage(settings, result);
  const step = stepHealth(app.health, { kind: "probe", instanceId: app.instanceId, now, failure }, settings.graceSeconds);
  await save(env, app, step.record);
  await notifyHealth(env, app, app.health, step.record, now);
  // The instance's samples (CPU, memory, restarts) run while it does: they raise app.crashed and the metrics alerts.
  await appMetrics(env, app.id).watch(app.id).catch((err: unknown) => log("warn", "metrics sampling not started", { app_id: app.id, ...describeError(err) }));
  if (!step.restart) return;
  log("warn", "app instance failed its health check; restarting", { app_id: app.id, instance_id: app.instanceId, failures: step.record?.failures });
  let event: HealthEvent | null = null;
  try {
    const outcome = await restart();
    if (outcome.outcome === "refused") log("info", "health restart refused; the next check tries again", { app_id: app.id, code: outcome.code });
  } catch (err) {
    log("warn", "health restart failed", { app_id: app.id, ...describeError(err) });
    const message = err instanceof InstanceExitedError ? `The restart failed: ${err.message}` : "The restart failed; the next check tries again.";
    event = { kind: "restart_failed", now, message };
  }
  if (event) {
    const fresh = { ...app, health: step.record };
    await save(env, fresh, stepHealth(step.record, event, settings.graceSeconds).record);
  }
}

/** Writes the record when it changed, only while the app still runs the instance checked, with the same check. */
async function save(env: Env, app: AppRow, record: HealthRecord | null): Promise<void> {
  if (JSON.stringify(record) === JSON.stringify(app.health)) return;
  await recordHealth(env, app.id, app.instanceId, record, app.healthCheck);
}
