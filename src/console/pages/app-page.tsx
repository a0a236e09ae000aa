import type { AppView, DeployView } from "../../apps/store";
import { billingHints } from "../../billing/hints";
import { formatDa } from "../../billing/rules";
import { AppStatusBadge, type SettingsValues, SettingsFields, planLabel } from "./app-components";
import { ControlsCard } from "./app-controls";
import { Csrf, DateTime } from "./components";
import { DeployHistory, FailurePanel, liveState } from "./deploy-panel";
import { BUILT_STOPPED, builtWhileStopped } from "../../apps/messages";
import { type HealthForm, HealthFact, HealthSection } from "./health-section";
import { DomainsSection, type DomainsSectionProps } from "./domains-section";
import { type EnvPasteForm, type EnvRowsForm, EnvSection } from "./env-section";
import type { Flash } from "./flash";
import type { FieldErrors } from "./forms";
import { Layout, type Viewer } from "./layout";
import { PushSection, type PushSectionState } from "./push-section";
import { LogsSection, type LogsSectionProps } from "./logs-section";

/** Everything the app page shows. */
export interface AppPageProps {
  viewer: Viewer;
  app: AppView;
  deploys: DeployView[];
  /** Set once the app has been deployed: the subdomain can no longer change. */
  subdomainFixed: boolean;
  appsDomain: string;
  flash?: Flash | null;
  /** The settings form as typed, when it is shown again with errors. */
  values?: Record<string, string>;
  errors?: FieldErrors;
  /** The Custom domains section: its domains, and the add form as typed with its error. */
  domains: Pick<DomainsSectionProps, "domains" | "provider" | "recheckSeconds" | "expired" | "blocked" | "hostname" | "error">;
  /** The Environment section's rows (as saved, or as typed with their messages) and paste box. */
  envRows: EnvRowsForm;
  envPaste?: EnvPasteForm;
  /** The health check form as typed, with its errors. */
  healthForm?: HealthForm;
  /** The private repository and deploy-on-push section: a token error, or a secret just made. */
  push?: PushSectionState;
  /** The Logs section (the page itself, not its forms' error renders, shows it). */
  logs?: LogsSectionProps;
}

/** The port the app is probed on and why (SPEC.md deployment contract 2), once a build told it. */
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

function settingsOf(app: AppView): SettingsValues {
  return {
    name: app.name,
    repository: app.repository,
    branch: app.branch,
    root_directory: app.root_directory,
    dockerfile_path: app.dockerfile_path,
    subdomain: app.subdomain,
  };
}

/**
 * An app's page: status, address, probed port, the red panel of a failed last deploy, the
 * controls, the deploys with their logs, the environment variables, the settings and Delete. The part above the settings is
 * redrawn by the console script while a deploy runs (the settings form is left alone, so typing
 * is never lost).
 */
export function AppPage(props: AppPageProps) {
  const { app, viewer } = props;
  const latest = app.latest_deploy;
  const billing = billingHints(app);
  return (
    <Layout title={app.name} viewer={viewer} section="apps" flash={props.flash}>
      <div
        id="app-live"
        data-app-src={`/console/api/apps/${app.id}`}
        data-app-state={liveState(app)}
        data-deploying={app.deploy_in_progress ? "true" : "false"}
      >
        <p class="crumbs">
          <a href="/console/apps">Apps</a> / {app.name}
        </p>
        <div class="title-row">
          <h1>{app.name}</h1>
          <AppStatusBadge status={app.status} />
        </div>
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
        <dl class="facts">
          <div>
            <dt>Address</dt>
            <dd>
              <a href={app.url} rel="noopener noreferrer" data-app-url="">
                {app.hostname}
              </a>
            </dd>
          </div>
          <div>
            <dt>Probed port</dt>
            <dd>
              <ProbedPort app={app} />
            </dd>
          </div>
          <div>
            <dt>Plan</dt>
            <dd>
              {planLabel(app.plan)} <span class="muted">({formatDa(app.billing.next_price)} a month)</span>
            </dd>
          </div>
          <div>
            <dt>Billing</dt>
            <dd data-billing="summary">
              {billing.summary} <a href="/console/billing">Wallet</a>
            </dd>
          </div>
          <HealthFact health={app.health} locale={viewer.locale} />
          <div>
            <dt>Created</dt>
            <dd>
              <DateTime iso={app.created_at} locale={viewer.locale} />
            </dd>
          </div>
        </dl>
        {billing.warning && (
          <p class="alert" data-billing="warning">
            {billing.warning}
          </p>
        )}
        {latest?.status === "failed" && <FailurePanel appId={app.id} deploy={latest} stillServing={app.status === "running"} />}
        <ControlsCard app={app} csrfToken={viewer.csrfToken} />
        <p>
          <a href={`/console/apps/${app.id}/metrics`}>Metrics</a>: requests, response times, CPU and memory.
        </p>
        <DeployHistory appId={app.id} deploys={props.deploys} locale={viewer.locale} csrfToken={viewer.csrfToken} />
      </div>
      <p class="visually-hidden" role="status" data-app-announce=""></p>
      {props.logs && <LogsSection {...props.logs} />}
      <DomainsSection appId={app.id} csrfToken={viewer.csrfToken} locale={viewer.locale} {...props.domains} />
      <EnvSection app={app} csrfToken={viewer.csrfToken} rows={props.envRows} paste={props.envPaste} flash={props.flash} />
      <HealthSection app={app} csrfToken={viewer.csrfToken} form={props.healthForm} />
      <PushSection app={app} csrfToken={viewer.csrfToken} state={props.push} />
      <section class="card" id="settings" aria-labelledby="settings-heading">
        <h2 id="settings-heading">Settings</h2>
        <p class="lead">The name changes at once; the source settings are used from the next deploy.</p>
        <form method="post" action={`/console/apps/${app.id}/settings`} class="form-card" novalidate>
          <Csrf token={viewer.csrfToken} />
          <SettingsFields
            values={{ ...settingsOf(app), ...props.values }}
            errors={props.errors}
            subdomainFixed={props.subdomainFixed}
            appsDomain={props.appsDomain}
          />
          <button type="submit">Save settings</button>
        </form>
      </section>
      <section class="card danger-zone" aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete this app</h2>
        <p>Its instance, images, deploy logs and settings are removed, and its address stops answering.</p>
        <a class="button danger" href={`/console/apps/${app.id}/delete`}>
          Delete
        </a>
      </section>
    </Layout>
  );
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
