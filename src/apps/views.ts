import { type BillingView, viewBilling } from "../billing/app-billing";
import type { AppStatus, DeployKind, DeployStatus, PortSource } from "../db/schema";
import { iso } from "../lib/time";
import { instanceHealth } from "../runtime/instance-settings";
import type { InstanceRunState } from "../runtime/types";
import { type HealthView, viewHealth, viewHealthCheck } from "./health";
import { rollbackAvailable } from "./history";
import { type AppRow, DEPLOY_RUNNING, type DeployRow } from "./store";

/** The app and its deploys as the JSON API and the console show them: pure functions of the rows (src/apps/store.ts). */
export interface DeployView {
  id: string;
  status: DeployStatus;
  /** `deploy` (Deploy pressed), `rollback` (an earlier deploy's image run again) or `push` (a push to the branch). */
  kind: DeployKind;
  /** The commit built, when the forge said; a rollback carries the commit of the image it runs. */
  commit: { sha: string; message: string } | null;
  /** The engine's id of the image (`sha256:...`). */
  image_digest: string | null;
  /** The plan and the variable set version its instance started with (null until it went live). */
  plan: string | null;
  env_version: number | null;
  /** For a rollback: the deploy whose image it runs. */
  rollback_of: string | null;
  /** Its image is kept and it is not the one the app runs now (src/apps/history.ts). */
  rollback_available: boolean;
  started_at: string;
  finished_at: string | null;
  port: number | null;
  port_source: PortSource | null;
  port_reason: string | null;
  failure?: { kind: string; message: string };
}

/** A deploy as the JSON shows it; `app` (its live deploy) decides `rollback_available`. */
export function viewDeploy(row: DeployRow, app: { liveDeployId: string | null }): DeployView {
  return {
    id: row.id,
    status: row.status,
    kind: row.kind,
    commit: row.commitSha ? { sha: row.commitSha, message: row.commitMessage ?? "" } : null,
    image_digest: row.imageDigest,
    plan: row.plan,
    env_version: row.envVersion,
    rollback_of: row.rollbackOf,
    rollback_available: rollbackAvailable(row, app.liveDeployId),
    started_at: iso(row.startedAt),
    finished_at: row.finishedAt === null ? null : iso(row.finishedAt),
    port: row.port,
    port_source: row.portSource,
    port_reason: row.portReason,
    ...(row.failure ? { failure: row.failure } : {}),
  };
}

/** The app's deploy-on-push address, on the console's own origin (src/webhooks/route.ts). */
export function webhookUrl(appId: string, requestUrl: string): string {
  return `${new URL(requestUrl).origin}/webhooks/apps/${appId}`;
}

/** Where the app's hostname is reached from the caller's side: same scheme and port as the console. */
export function appUrl(hostname: string, requestUrl: string): string {
  const { protocol, port } = new URL(requestUrl);
  return `${protocol}//${hostname}${port ? `:${port}` : ""}`;
}

export interface AppView {
  id: string;
  name: string;
  repository: string;
  branch: string;
  root_directory: string;
  dockerfile_path: string;
  subdomain: string;
  hostname: string;
  url: string;
  plan: string;
  status: AppStatus;
  deploy_in_progress: boolean;
  port: number | null;
  port_source: PortSource | null;
  port_reason: string | null;
  created_at: string;
  latest_deploy: DeployView | null;
  env: EnvStateView;
  billing: BillingView;
  /** The serving instance's process as the engine reports it; null when none serves (or the engine is not reachable). */
  instance: InstanceView | null;
  /** Why the control plane last restarted the instance fresh, and when (src/apps/disk-watch.ts); null: never. */
  last_restart: { at: string; reason: string } | null;
  /** The app's health check settings, and what the periodic checks found (src/apps/health.ts). */
  health_check: ReturnType<typeof viewHealthCheck>;
  health: HealthView;
  /** Whether a private repository's access token is saved (the token itself is never shown). */
  source_token_set: boolean;
  /** Deploy on push: the app's webhook address; `secret_set` once a secret was made (POST .../webhook/rotate). */
  webhook: { url: string; secret_set: boolean };
}

/**
 * The serving instance: `running`, `restarting` (the engine restarts it after a crash, on the same
 * port) or `crashed` (restarted too often, or it will not be restarted), with the engine's
 * restart count, its last exit code and whether the kernel's out-of-memory killer ended it.
 * `output`: the last 50 lines of a crashed instance's output.
 */
export interface InstanceView {
  state: "running" | "restarting" | "crashed";
  restarts: number;
  exit_code: number | null;
  oom_killed: boolean;
  output?: string;
}

/** Lines of a crashed instance's output shown with it. */
export const CRASH_OUTPUT_LINES = 50;

export function viewInstance(state: InstanceRunState, now: number, output?: string): InstanceView {
  const health = instanceHealth(state, now);
  return {
    state: health,
    restarts: state.restarts,
    exit_code: state.exitCode,
    oom_killed: state.oomKilled,
    ...(health === "crashed" && output !== undefined ? { output } : {}),
  };
}

/**
 * The app's variable set: the saved `version`, the one the serving instance was started with,
 * whether a new instance is taking over, and the last save whose instance failed its check.
 */
export interface EnvStateView {
  version: number;
  applied_version: number;
  applying: boolean;
  /** The save whose instance failed its check, with that check's log; the running instance has an older set. */
  failure: { version: number; message: string; log: string } | null;
}

/** A save is being applied while a serving app's instance has an older set and no failure was recorded for it. */
export function viewEnvState(row: AppRow): EnvStateView {
  const failed = row.envFailure !== null && row.envFailure.version > row.envAppliedVersion;
  return {
    version: row.envVersion,
    applied_version: row.envAppliedVersion,
    applying: row.status === "running" && row.envVersion > row.envAppliedVersion && row.envFailure?.version !== row.envVersion,
    failure: failed ? { version: row.envFailure!.version, message: row.envFailure!.message, log: row.envFailure!.log } : null,
  };
}

export function viewApp(row: AppRow, latest: DeployRow | undefined, appsDomain: string, requestUrl: string, instance: InstanceView | null = null): AppView {
  const hostname = `${row.subdomain}.${appsDomain}`;
  return {
    id: row.id,
    name: row.name,
    repository: row.repository,
    branch: row.branch,
    root_directory: row.rootDirectory,
    dockerfile_path: row.dockerfilePath,
    subdomain: row.subdomain,
    hostname,
    url: appUrl(hostname, requestUrl),
    plan: row.plan,
    status: row.status,
    deploy_in_progress: latest !== undefined && DEPLOY_RUNNING.includes(latest.status),
    port: row.port,
    port_source: row.portSource,
    port_reason: row.portReason,
    created_at: iso(row.createdAt),
    latest_deploy: latest ? viewDeploy(latest, row) : null,
    env: viewEnvState(row),
    billing: viewBilling(row),
    instance,
    last_restart: row.lastRestart ? { at: iso(row.lastRestart.at), reason: row.lastRestart.reason } : null,
    health_check: viewHealthCheck(row.healthCheck),
    health: viewHealth(row),
    source_token_set: row.sourceToken !== null,
    webhook: { url: webhookUrl(row.id, requestUrl), secret_set: row.webhookSecret !== null },
  };
}
