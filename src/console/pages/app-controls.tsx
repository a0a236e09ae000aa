import { deployLabel } from "../../apps/controls";
import { billingHints } from "../../billing/hints";
import { PLANS, PLAN_IDS } from "../../apps/plans";
import type { AppView } from "../../apps/views";
import { planSummary } from "./app-components";
import { Csrf } from "./components";
import { Layout, type Viewer } from "./layout";

/** One control as a form posting to `/console/apps/<id>/<action>`. */
function ControlForm(props: { appId: string; action: string; csrfToken: string; label: string; secondary?: boolean; disabled?: boolean }) {
  return (
    <form method="post" action={`/console/apps/${props.appId}/${props.action}`}>
      <Csrf token={props.csrfToken} />
      <button type="submit" class={props.secondary ? "secondary" : undefined} disabled={props.disabled} aria-disabled={props.disabled ? "true" : undefined}>
        {props.label}
      </button>
    </form>
  );
}

/** What each control shown does to billing. */
function BillingHints(props: { app: AppView; label: string }) {
  const { app, label } = props;
  const billing = billingHints(app);
  return (
    <ul class="billing-hints" aria-label="What the controls do to billing">
      <li data-billing="deploy">
        <strong>{label === "Deploying…" ? "Redeploy" : label}:</strong> {billing.deploy}
      </li>
      {app.status === "running" && (
        <li data-billing="restart">
          <strong>Restart:</strong> {billing.restart}
        </li>
      )}
      {app.status === "running" && (
        <li data-billing="stop">
          <strong>Stop:</strong> {billing.stop}
        </li>
      )}
      {app.status === "stopped" && (
        <li data-billing="start">
          <strong>Start:</strong> {billing.start}
        </li>
      )}
    </ul>
  );
}

/** Change plan: the plans with their limits, and what changing does now and to billing. */
function PlanForm(props: { app: AppView; csrfToken: string }) {
  const { app } = props;
  return (
    <form method="post" action={`/console/apps/${app.id}/plan`} class="inline-form plan-form">
      <Csrf token={props.csrfToken} />
      <div class="field">
        <label for="f-plan">Plan</label>
        <select id="f-plan" name="plan" aria-describedby="f-plan-hint">
          {PLAN_IDS.map((id) => (
            <option value={id} selected={id === app.plan}>
              {`${PLANS[id].label}: ${planSummary(id)}`}
            </option>
          ))}
        </select>
        <p class="hint" id="f-plan-hint">
          {app.status === "running"
            ? "A running app restarts briefly with the new plan's limits."
            : "The new limits apply when the app next starts."}{" "}
          <span data-billing="plan">{billingHints(app).plan}</span>
        </p>
      </div>
      <div class="actions">
        <button type="submit" class="secondary">
          Change plan
        </button>
      </div>
    </form>
  );
}

/**
 * docs/apps.md, App controls, with its labels: `Deploy` / `Redeploy` (`Deploying…` while a deploy
 * runs, and then pressing it does nothing), `Stop` and `Restart` for a running app, `Start` for a
 * stopped one, `Change plan`, and `Delete` behind a confirmation. Controls that do not apply to
 * the app's state are not shown; Stop, Restart and Change plan pressed during a deploy are refused
 * by the app's controller with its try-again message.
 */
export function ControlsCard(props: { app: AppView; csrfToken: string }) {
  const { app, csrfToken } = props;
  const label = deployLabel(app.status, app.deploy_in_progress);
  return (
    <section class="card" aria-labelledby="controls-heading">
      <h2 id="controls-heading">Controls</h2>
      <div class="controls">
        <ControlForm appId={app.id} action="deploy" csrfToken={csrfToken} label={label} disabled={app.deploy_in_progress} />
        {app.status === "running" && <ControlForm appId={app.id} action="restart" csrfToken={csrfToken} label="Restart" secondary />}
        {app.status === "running" && <ControlForm appId={app.id} action="stop" csrfToken={csrfToken} label="Stop" secondary />}
        {app.status === "stopped" && <ControlForm appId={app.id} action="start" csrfToken={csrfToken} label="Start" />}
      </div>
      {app.deploy_in_progress && (
        <p class="hint" data-refresh-link="">
          A deploy is running. <a href={`/console/apps/${app.id}`}>Refresh</a> to see how it is going.
        </p>
      )}
      <p class="hint">
        {app.deploy_in_progress
          ? "An app already live keeps serving its previous version until the new one answers."
          : app.status === "not_deployed"
            ? "The first deploy builds the branch and starts the app."
            : "A redeploy builds the branch again and switches traffic once the new version answers."}
      </p>
      <BillingHints app={app} label={label} />
      <PlanForm app={app} csrfToken={csrfToken} />
    </section>
  );
}

/** The confirmation page of Delete, naming the app. */
export function DeleteAppPage(props: { viewer: Viewer; app: AppView }) {
  const { app } = props;
  return (
    <Layout title={`Delete ${app.name}`} viewer={props.viewer} section="apps">
      <div class="card narrow">
        <h1>Delete {app.name}?</h1>
        <p>This cannot be undone.</p>
        <p data-billing="delete">{billingHints(app).delete}</p>
        <p>
          The app <strong>{app.name}</strong> stops answering at <code>{app.hostname}</code>; its instance, its images, its
          deploy logs and its settings are removed.
        </p>
        <form method="post" action={`/console/apps/${app.id}/delete`} class="row-actions">
          <Csrf token={props.viewer.csrfToken} />
          <a class="button secondary" href={`/console/apps/${app.id}`}>
            Cancel
          </a>
          <button type="submit" class="danger">
            Delete {app.name}
          </button>
        </form>
      </div>
    </Layout>
  );
}
