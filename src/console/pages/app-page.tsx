import type { AppView } from "../../apps/views";
import { billingHints } from "../../billing/hints";
import { formatDa } from "../../billing/rules";
import { BUILT_STOPPED, builtWhileStopped } from "../../apps/messages";
import { planLabel } from "./app-components";
import { ControlsCard } from "./app-controls";
import { AppFrame } from "./app-tabs";
import { DateTime } from "./components";
import { DeployHistory, FailurePanel } from "./deploy-panel";
import { EnvFailurePanel } from "./env-section";
import type { Flash } from "./flash";
import { HealthFact } from "./health-section";
import type { Viewer } from "./layout";

/** What the Overview tab shows. */
export interface OverviewProps {
  viewer: Viewer;
  app: AppView;
  flash?: Flash | null;
}

/** The port the app is probed on and why (docs/apps.md, contract 2), once a build told it. */
function ProbedPort(props: { app: AppView }) {
  const { app } = props;
  const port = app.port ?? app.latest_deploy?.port ?? null;
  const reason = app.port !== null ? app.port_reason : app.latest_deploy?.port_reason;
  if (port === null) return <span class="muted">read from the Dockerfile at the first deploy</span>;
  return (
    <span>
      <strong>{port}</strong> <span class="muted">({reason})</span>
    </span>
  );
}

/** The app's facts at the top of the Overview: address, probed port, plan, billing, health, creation. */
function AppFacts(props: { app: AppView; locale: string; summary: string }) {
  return (
    <dl class="facts">
      <div>
        <dt>Address</dt>
        <dd>
          <a href={props.app.url} rel="noopener noreferrer" data-app-url="">
            {props.app.hostname}
          </a>
        </dd>
      </div>
      <div>
        <dt>Probed port</dt>
        <dd>
          <ProbedPort app={props.app} />
        </dd>
      </div>
      <div>
        <dt>Plan</dt>
        <dd>
          {planLabel(props.app.plan)} <span class="muted">({formatDa(props.app.billing.next_price)} a month)</span>
        </dd>
      </div>
      <div>
        <dt>Billing</dt>
        <dd data-billing="summary">
          {props.summary} <a href="/console/billing">Wallet</a>
        </dd>
      </div>
      <HealthFact health={props.app.health} locale={props.locale} />
      <div>
        <dt>Created</dt>
        <dd>
          <DateTime iso={props.app.created_at} locale={props.locale} />
        </dd>
      </div>
    </dl>
  );
}

/**
 * An app's Overview tab: status, address, probed port, plan, billing and health, the red panel of
 * a failed last deploy (or of variables not applied), the controls and the latest deploy. All of it
 * is redrawn by the console script while a deploy runs; nothing here takes typing.
 */
export function OverviewPage(props: OverviewProps) {
  const { app, viewer } = props;
  const latest = app.latest_deploy;
  const billing = billingHints(app);
  const live = (
    <>
      <InstanceNotice instance={app.instance} />
      {app.last_restart && (
        <p class="notice" data-last-restart="">
          {app.last_restart.reason} <span class="muted">(<DateTime iso={app.last_restart.at} locale={viewer.locale} />)</span>
        </p>
      )}
      {builtWhileStopped(app) && (
        <p class="notice" data-built-stopped="">
          {BUILT_STOPPED}
        </p>
      )}
      <AppFacts app={app} locale={viewer.locale} summary={billing.summary} />
      {billing.warning && (
        <p class="alert" data-billing="warning">
          {billing.warning}
        </p>
      )}
      {latest?.status === "failed" && <FailurePanel appId={app.id} deploy={latest} stillServing={app.status === "running"} />}
      {app.env.failure && <EnvFailurePanel app={app} level={2} />}
      <ControlsCard app={app} csrfToken={viewer.csrfToken} />
      <DeployHistory appId={app.id} deploys={latest ? [latest] : []} locale={viewer.locale} csrfToken={viewer.csrfToken} latestOnly />
    </>
  );
  return <AppFrame viewer={viewer} app={app} tab="overview" flash={props.flash} live={live} />;
}

/**
 * The serving instance's own state when it is not simply running: restarted by the engine after a
 * crash, or crashed for good (Crashed, its exit code, whether the kernel's OOM killer ended it,
 * and its last output).
 */
function InstanceNotice(props: { instance: AppView["instance"] }) {
  const instance = props.instance;
  if (!instance || instance.state === "running") return null;
  const oom = instance.oom_killed ? " It ran out of memory (killed by the kernel's OOM killer): a larger plan gives it more." : "";
  const code = instance.exit_code === null ? "" : ` Exit code ${instance.exit_code}.`;
  if (instance.state === "restarting")
    return (
      <p class="alert" data-instance-state="restarting">
        Restarting: the app's process stopped and the engine is starting it again (restarts: {instance.restarts}).{code}
        {oom}
      </p>
    );
  return (
    <div class="failure-panel" data-instance-state="crashed">
      <p>
        <strong>Crashed</strong>: the app's process kept exiting, so the engine stopped restarting it after {instance.restarts} restarts.{code}
        {oom} Fix the app and deploy again, or press Restart.
      </p>
      {instance.output ? <pre class="log">{instance.output}</pre> : null}
    </div>
  );
}
