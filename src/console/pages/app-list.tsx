import { DEFAULT_PLAN } from "../../apps/plans";
import type { AppView } from "../../apps/views";
import { AppStatusBadge, PlanChoices, type SettingsValues, SettingsFields, planLabel } from "./app-components";
import { Csrf, EmptyState } from "./components";
import type { Flash } from "./flash";
import type { FieldErrors } from "./forms";
import { Layout, type Viewer } from "./layout";

/** The Apps list: each app's name, address, status and plan, and the way to a new one. */
export function AppListPage(props: { viewer: Viewer; apps: AppView[]; flash?: Flash | null }) {
  return (
    <Layout title="Apps" viewer={props.viewer} section="apps" flash={props.flash}>
      <div class="section-head">
        <div>
          <h1>Apps</h1>
          <p class="lead">Apps built from a repository's Dockerfile and served at their own hostname.</p>
        </div>
        <a class="button" href="/console/apps/new">
          New app
        </a>
      </div>
      <section class="card" aria-labelledby="apps-heading">
        <h2 id="apps-heading">Your apps</h2>
        {props.apps.length === 0 ? (
          <EmptyState title="No apps yet">
            Create one from a git repository with a Dockerfile; it is built and served when you press Deploy.
          </EmptyState>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Address</th>
                  <th scope="col">Status</th>
                  <th scope="col">Plan</th>
                </tr>
              </thead>
              <tbody>
                {props.apps.map((app) => (
                  <tr data-app-id={app.id}>
                    <td>
                      <a href={`/console/apps/${app.id}`}>{app.name}</a>
                    </td>
                    <td>
                      <a href={app.url} rel="noopener noreferrer">
                        {app.hostname}
                      </a>
                    </td>
                    <td>
                      <AppStatusBadge status={app.status} />
                      {app.deploy_in_progress && <span class="muted"> · Deploying…</span>}
                    </td>
                    <td>{planLabel(app.plan)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </Layout>
  );
}

/** What the New app form starts with. */
export const NEW_APP_DEFAULTS: SettingsValues & { plan: string } = {
  name: "",
  repository: "",
  branch: "main",
  root_directory: "",
  dockerfile_path: "Dockerfile",
  subdomain: "",
  plan: DEFAULT_PLAN,
};

interface NewAppProps {
  viewer: Viewer;
  appsDomain: string;
  values?: Record<string, string>;
  errors?: FieldErrors;
}

/** The New app form; shown again with the values kept and each error under its field. */
export function NewAppPage(props: NewAppProps) {
  const values = { ...NEW_APP_DEFAULTS, ...props.values };
  return (
    <Layout title="New app" viewer={props.viewer} section="apps">
      <p class="crumbs">
        <a href="/console/apps">Apps</a> / New app
      </p>
      <h1>New app</h1>
      <p class="lead">Nothing is built yet when you create it: the first deploy starts when you press Deploy on the app's page.</p>
      {props.errors?._form && (
        <p class="alert" role="alert">
          {props.errors._form}
        </p>
      )}
      <section class="card form-card" aria-label="App settings">
        <form method="post" action="/console/apps" novalidate>
          <Csrf token={props.viewer.csrfToken} />
          <SettingsFields values={values} errors={props.errors} appsDomain={props.appsDomain} />
          <PlanChoices selected={values.plan} error={props.errors?.plan} />
          <button type="submit">Create app</button>
        </form>
      </section>
    </Layout>
  );
}
