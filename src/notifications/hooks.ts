import type { HealthRecord } from "../apps/health";
import { type AppRow, deployById, getApp } from "../apps/store";
import { appEvent, raiseEvent, raiseQuietly, settleIncident } from "./raise";
import { domainIncident } from "./rules";

/**
 * The one-line calls where things happen (docs/alerts.md, "Events"): each reads what it needs,
 * raises its event once per incident, and never throws (a change that raised an event has
 * happened, and stands).
 */

/** deploy.live or deploy.failed, as the deploy's record now says; nothing while it is still in flight. */
export async function notifyDeploy(env: Env, deployId: string, now: number): Promise<void> {
  await raiseQuietly(env, async () => {
    const deploy = await deployById(env, deployId);
    if (!deploy || (deploy.status !== "live" && deploy.status !== "failed")) return;
    const app = await getApp(env, deploy.appId);
    if (!app) return;
    const live = deploy.status === "live";
    const details = { deploy_id: deploy.id, kind: deploy.kind, commit_sha: deploy.commitSha, ...(live ? {} : { failure_kind: deploy.failure?.kind ?? null, message: deploy.failure?.message ?? null }) };
    await raiseEvent(env, appEvent(app, live ? "deploy.live" : "deploy.failed", `deploy:${deploy.id}:${deploy.status}`, now, details));
  });
}

/**
 * app.unhealthy when the periodic checks find the serving instance unhealthy (HEALTH_FAILURES_TO_RESTART
 * failures in a row), app.recovered when it is healthy again: one incident, read from the health
 * record before and after a check, so a check that changes nothing reads no incident.
 */
export async function notifyHealth(env: Env, app: AppRow, before: HealthRecord | null, after: HealthRecord | null, now: number): Promise<void> {
  const unhealthy = after?.state === "unhealthy";
  if (!unhealthy && before?.state !== "unhealthy") return;
  if (!unhealthy && after?.state !== "healthy") return;
  await raiseQuietly(env, () =>
    settleIncident(
      env,
      { subject: app.id, kind: "unhealthy", holds: unhealthy, now },
      {
        opened: (key) => appEvent(app, "app.unhealthy", key, now, { message: after?.lastFailure?.message ?? null, failures: after?.failures ?? 0 }),
        closed: (key) => appEvent(app, "app.recovered", key, now, { message: "The health check passes again." }),
      },
    ),
  );
}

/** renewal.failed: the wallet did not cover a renewal, and the app was stopped with "payment due". */
export async function notifyRenewalFailed(env: Env, app: AppRow, now: number, price: number): Promise<void> {
  const message = `The wallet did not cover the renewal (${price} DA); the app was stopped. Add credit, then Start it.`;
  await raiseQuietly(env, () => raiseEvent(env, appEvent(app, "renewal.failed", `renewal:${app.id}:${app.periodEnd ?? now}`, now, { price, currency: "DA", period_end: app.periodEnd ? new Date(app.periodEnd).toISOString() : null, message })));
}

/** domain.error when a custom domain that served moves to `error` (rules.ts domainIncident); closed when it is active again. */
export async function notifyDomain(env: Env, app: AppRow, domain: { id: string; hostname: string; status: string }, to: string, reason: string | null, now: number): Promise<void> {
  const step = domainIncident(domain.status, to);
  if (step === null) return;
  await raiseQuietly(env, () =>
    settleIncident(env, { subject: `domain:${domain.id}`, kind: "domain_error", holds: step === "open", now }, {
      opened: (key) => appEvent(app, "domain.error", key, now, { hostname: domain.hostname, previous_status: domain.status, message: reason ?? `${domain.hostname} is in error.` }),
    }),
  );
}
