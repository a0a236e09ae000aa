import type { AppView, DeployView } from "../../apps/views";
import { type SettingsValues, SettingsFields } from "./app-components";
import { AppFrame } from "./app-tabs";
import { Csrf } from "./components";
import { DeployHistory } from "./deploy-panel";
import { DomainsSection, type DomainsSectionProps } from "./domains-section";
import { type EnvPasteForm, type EnvRowsForm, EnvSection } from "./env-section";
import type { Flash } from "./flash";
import type { FieldErrors } from "./forms";
import { type HealthForm, HealthSection } from "./health-section";
import type { Viewer } from "./layout";
import { LogsSection, type LogsSectionProps } from "./logs-section";
import { PushSection, type PushSectionState } from "./push-section";

/** The app's tabs other than Overview and Metrics: each one section of what was one long page. */

/** What every tab starts from. */
export interface TabBase {
  viewer: Viewer;
  app: AppView;
  flash?: Flash | null;
}

/** Deploys: every deploy with its commit, image, log and Rollback (redrawn while a deploy runs). */
export function DeploysPage(props: TabBase & { deploys: DeployView[] }) {
  const { app, viewer } = props;
  const live = <DeployHistory appId={app.id} deploys={props.deploys} locale={viewer.locale} csrfToken={viewer.csrfToken} />;
  return <AppFrame viewer={viewer} app={app} tab="deploys" flash={props.flash} live={live} />;
}

/** Logs: the runtime output, followed live by the console script, and its search. */
export function LogsPage(props: TabBase & { logs: LogsSectionProps }) {
  return (
    <AppFrame viewer={props.viewer} app={props.app} tab="logs" flash={props.flash}>
      <LogsSection {...props.logs} />
    </AppFrame>
  );
}

/** Environment: the variables as rows, and the paste box. */
export function EnvironmentPage(props: TabBase & { rows: EnvRowsForm; paste?: EnvPasteForm }) {
  const { app, viewer } = props;
  return (
    <AppFrame viewer={viewer} app={app} tab="environment" flash={props.flash}>
      <EnvSection app={app} csrfToken={viewer.csrfToken} rows={props.rows} paste={props.paste} flash={props.flash} />
    </AppFrame>
  );
}

/** Domains: the custom domains with their DNS records and checks, and the add form. */
export function DomainsPage(props: TabBase & { domains: Omit<DomainsSectionProps, "appId" | "csrfToken" | "locale"> }) {
  const { app, viewer } = props;
  return (
    <AppFrame viewer={viewer} app={app} tab="domains" flash={props.flash}>
      <DomainsSection appId={app.id} csrfToken={viewer.csrfToken} locale={viewer.locale} {...props.domains} />
    </AppFrame>
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

/** The Settings tab's forms as typed, when one is shown again with its errors (or a secret just made). */
export interface SettingsForms {
  values?: Record<string, string>;
  errors?: FieldErrors;
  healthForm?: HealthForm;
  push?: PushSectionState;
}

/** Settings: the source settings, the health check, the private repository and deploy on push, and Delete. */
export function SettingsPage(props: TabBase & SettingsForms & { subdomainFixed: boolean; appsDomain: string }) {
  const { app, viewer } = props;
  return (
    <AppFrame viewer={viewer} app={app} tab="settings" flash={props.flash}>
      <section class="card" id="settings" aria-labelledby="settings-heading">
        <h2 id="settings-heading">Settings</h2>
        <p class="lead">The name changes at once; the source settings are used from the next deploy.</p>
        <form method="post" action={`/console/apps/${app.id}/settings`} class="form-card" novalidate>
          <Csrf token={viewer.csrfToken} />
          <SettingsFields values={{ ...settingsOf(app), ...props.values }} errors={props.errors} subdomainFixed={props.subdomainFixed} appsDomain={props.appsDomain} />
          <button type="submit">Save settings</button>
        </form>
      </section>
      <HealthSection app={app} csrfToken={viewer.csrfToken} form={props.healthForm} />
      <PushSection app={app} csrfToken={viewer.csrfToken} state={props.push} />
      <section class="card danger-zone" aria-labelledby="delete-heading">
        <h2 id="delete-heading">Delete this app</h2>
        <p>Its instance, images, deploy logs and settings are removed, and its address stops answering.</p>
        <a class="button danger" href={`/console/apps/${app.id}/delete`}>
          Delete
        </a>
      </section>
    </AppFrame>
  );
}
