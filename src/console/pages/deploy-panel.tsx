import type { AppView, DeployView } from "../../apps/views";
import { DeployStatusBadge, planLabel, shortId } from "./app-components";
import { Csrf, DateTime, EmptyState } from "./components";
import type { Flash } from "./flash";
import { Layout, type Viewer } from "./layout";

/** Deploys, and the pages showing them: the red panel, the history, a deploy's log. */

/** Where a deploy's log is read in the console. */
export const deployPath = (appId: string, deployId: string) => `/console/apps/${appId}/deploys/${deployId}`;

/** Whether a deploy is still running (building or starting). */
export const isRunning = (deploy: DeployView | null) => deploy?.status === "building" || deploy?.status === "starting";

/**
 * The state the console script compares with what the JSON route says, to know when to redraw:
 * the latest deploy and its status, and the app's status.
 */
export const liveState = (app: AppView) => `${app.latest_deploy ? `${app.latest_deploy.id}:${app.latest_deploy.status}` : "none"}:${app.status}`;

/**
 * The red panel of a failed deploy: its one-paragraph interpretation of the log (docs/apps.md, failed-deploy messages: the log
 * is the record, the panel an interpretation of it) and the way to the full log.
 */
export function FailurePanel(props: { appId: string; deploy: DeployView; stillServing: boolean; linkToLog?: boolean }) {
  const { deploy } = props;
  return (
    <section class="failure-panel" aria-labelledby="failure-heading" data-failure-kind={deploy.failure?.kind}>
      <h2 id="failure-heading">{props.linkToLog === false ? "This deploy failed" : "The last deploy failed"}</h2>
      <p class="failure-message">{deploy.failure?.message ?? "The deploy failed. The log says what happened."}</p>
      {props.stillServing && <p>The app keeps serving the version that was live before.</p>}
      {props.linkToLog !== false && (
        <p>
          <a href={deployPath(props.appId, deploy.id)}>Read the full log of deploy {shortId(deploy.id)}</a>
        </p>
      )}
    </section>
  );
}

/**
 * Every deploy of the app, newest first (or, on the Overview, the latest one with the way to the
 * others), each with its commit, image, log and, while its image is kept, Rollback. When it
 * finished is on its log page.
 */
export function DeployHistory(props: { appId: string; deploys: DeployView[]; locale: string; csrfToken: string; latestOnly?: boolean }) {
  return (
    <section class="card" id="deploys" aria-labelledby="deploys-heading">
      <h2 id="deploys-heading">{props.latestOnly ? "Latest deploy" : "Deploys"}</h2>
      {props.deploys.length === 0 ? (
        <EmptyState title="No deploys yet">Press Deploy to build the branch and start the app. Each deploy keeps its log here.</EmptyState>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Deploy</th>
                <th scope="col">Commit</th>
                <th scope="col">Status</th>
                <th scope="col">Started</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.deploys.map((d) => (
                <DeployRow appId={props.appId} deploy={d} locale={props.locale} csrfToken={props.csrfToken} />
              ))}
            </tbody>
          </table>
          {props.latestOnly ? (
            <p class="hint">
              <a href={`/console/apps/${props.appId}/deploys`}>All deploys</a>, with their logs and Rollback.
            </p>
          ) : (
            <p class="hint">The images of the last 5 live deploys are kept: Rollback runs one again with the current variables, with no rebuild and no charge.</p>
          )}
        </div>
      )}
    </section>
  );
}

/** One deploy of the history: id, kind and image, commit, status, start, its log and Rollback. */
function DeployRow(props: { appId: string; deploy: DeployView; locale: string; csrfToken: string }) {
  const d = props.deploy;
  return (
    <tr data-deploy-id={d.id} data-deploy-kind={d.kind}>
      <td>
        <code title={d.id}>{shortId(d.id)}</code> <DeployKindLabel deploy={d} />
        <ImageLine deploy={d} />
      </td>
      <td data-commit="">
        <CommitCell commit={d.commit} />
      </td>
      <td>
        <DeployStatusBadge status={d.status} />
      </td>
      <td>
        <DateTime iso={d.started_at} locale={props.locale} />
      </td>
      <td class="actions-cell">
        <a href={deployPath(props.appId, d.id)} aria-label={`Log of deploy ${shortId(d.id)}`}>
          Log
        </a>
        {d.rollback_available && (
          <form method="post" action={`${deployPath(props.appId, d.id)}/rollback`}>
            <Csrf token={props.csrfToken} />
            <button type="submit" class="secondary" aria-label={`Roll back to deploy ${shortId(d.id)}`}>
              Rollback
            </button>
          </form>
        )}
      </td>
    </tr>
  );
}

function DeployKindLabel(props: { deploy: DeployView }) {
  const { deploy } = props;
  if (deploy.kind === "deploy") return null;
  const label = deploy.kind === "rollback" ? `rollback${deploy.rollback_of ? ` of ${shortId(deploy.rollback_of)}` : ""}` : "push";
  return <span class="badge" data-kind={deploy.kind}>{label}</span>;
}

/** The commit's short SHA and the first line of its message (the whole message on hover). */
function CommitCell(props: { commit: DeployView["commit"] }) {
  if (!props.commit) return <span class="hint">—</span>;
  const first = props.commit.message.split("\n")[0] ?? "";
  return (
    <span title={props.commit.message || undefined}>
      <code title={props.commit.sha}>{props.commit.sha.slice(0, 7)}</code> {first}
    </span>
  );
}

/** Under the deploy's id: its image's digest, short, and the plan and variable set version it ran with. */
function ImageLine(props: { deploy: DeployView }) {
  const { deploy } = props;
  const digest = deploy.image_digest?.replace(/^sha256:/, "").slice(0, 12);
  const ran = [deploy.plan ? planLabel(deploy.plan) : null, deploy.env_version !== null ? `env v${deploy.env_version}` : null].filter(Boolean).join(" · ");
  if (!digest && !ran) return null;
  return (
    <span class="hint deploy-image" data-image="">
      {digest && (
        <>
          image <code title={deploy.image_digest ?? undefined}>{digest}</code>
        </>
      )}
      {digest && ran ? " · " : ""}
      {ran}
    </span>
  );
}

interface LogPageProps {
  viewer: Viewer;
  app: AppView;
  deploy: DeployView;
  log: string;
  flash?: Flash | null;
}

/** A deploy's whole log; followed by the console script while the deploy runs. */
export function DeployLogPage(props: LogPageProps) {
  const { app, deploy, viewer } = props;
  const running = isRunning(deploy);
  const path = deployPath(app.id, deploy.id);
  return (
    <Layout title={`Deploy ${shortId(deploy.id)} · ${app.name}`} viewer={viewer} section="apps" flash={props.flash}>
      <div
        id="app-live"
        data-app-src={`/console/api/apps/${app.id}`}
        data-log-src={`/console/api/apps/${app.id}/deploys/${deploy.id}/log`}
        data-app-state={liveState(app)}
        data-deploying={running ? "true" : "false"}
      >
        <p class="crumbs">
          <a href="/console/apps">Apps</a> / <a href={`/console/apps/${app.id}`}>{app.name}</a> / <a href={`/console/apps/${app.id}/deploys`}>Deploys</a> / Deploy {shortId(deploy.id)}
        </p>
        <h1>
          Deploy <code>{shortId(deploy.id)}</code> of {app.name}
        </h1>
        <div class="meta">
          <span>
            Status <DeployStatusBadge status={deploy.status} />
          </span>
          <span>
            Started <DateTime iso={deploy.started_at} locale={viewer.locale} />
          </span>
          <span>
            Finished <DateTime iso={deploy.finished_at} locale={viewer.locale} never="not yet" />
          </span>
          {deploy.port !== null && (
            <span>
              Port {deploy.port} ({deploy.port_reason})
            </span>
          )}
        </div>
        {deploy.status === "failed" && <FailurePanel appId={app.id} deploy={deploy} stillServing={false} linkToLog={false} />}
        <section class="card" aria-labelledby="log-heading">
          <div class="section-head">
            <h2 id="log-heading">Log</h2>
            {running && (
              <a class="button small secondary" href={path} data-refresh-link="">
                Refresh
              </a>
            )}
          </div>
          {running && <p class="hint">The deploy is running. The log grows as it goes; Refresh shows the latest lines.</p>}
          <pre class="log" id="deploy-log" tabindex={0} aria-labelledby="log-heading">
            {props.log || (running ? "Waiting for the first lines…" : "This deploy has no log.")}
          </pre>
        </section>
      </div>
      <p class="visually-hidden" role="status" data-app-announce=""></p>
    </Layout>
  );
}
