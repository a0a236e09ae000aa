import { type BillingView, viewBilling } from "../billing/app-billing";
import { and, desc, eq } from "drizzle-orm";
import { database } from "../db/client";
import { type AppStatus, type DeployStatus, type PortSource, apps, deploys } from "../db/schema";
import { notFound } from "../http/errors";
import { iso, isUuid } from "../lib/time";
import { instanceHealth } from "../runtime/settings";
import type { InstanceRunState } from "../runtime/types";
import type { PlanId } from "./plans";

/**
 * The `apps` and `deploys` records: every query of these tables is here. Changes to an app go
 * through its AppController, which calls the writers below.
 */

export type AppRow = typeof apps.$inferSelect;
export type DeployRow = typeof deploys.$inferSelect;

export const NO_SUCH_APP = "No app with this id exists in your account.";

/** The caller's app, or 404 NOT_FOUND exactly like a missing one. */
export async function getOwnedApp(env: Env, accountId: string, id: string): Promise<AppRow> {
  const row = isUuid(id)
    ? await database(env)
        .select()
        .from(apps)
        .where(and(eq(apps.id, id.toLowerCase()), eq(apps.accountId, accountId)))
        .get()
    : undefined;
  if (!row) throw notFound(NO_SUCH_APP);
  return row;
}

export async function getApp(env: Env, id: string): Promise<AppRow | undefined> {
  return database(env).select().from(apps).where(eq(apps.id, id)).get();
}

export async function listApps(env: Env, accountId: string): Promise<AppRow[]> {
  return database(env).select().from(apps).where(eq(apps.accountId, accountId)).orderBy(desc(apps.createdAt));
}

/** The app answering at a subdomain, for the proxy. */
export async function appBySubdomain(env: Env, subdomain: string) {
  return database(env)
    .select({ id: apps.id, status: apps.status, instanceUrl: apps.instanceUrl })
    .from(apps)
    .where(eq(apps.subdomain, subdomain))
    .get();
}

export async function isSubdomainTaken(env: Env, subdomain: string, exceptAppId?: string): Promise<boolean> {
  const row = await database(env).select({ id: apps.id }).from(apps).where(eq(apps.subdomain, subdomain)).get();
  return row !== undefined && row.id !== exceptAppId;
}

export interface NewApp {
  id: string;
  accountId: string;
  name: string;
  repository: string;
  branch: string;
  rootDirectory: string;
  dockerfilePath: string;
  subdomain: string;
  plan: PlanId;
  createdAt: number;
}

export async function insertApp(env: Env, app: NewApp): Promise<AppRow> {
  const row = { ...app, status: "not_deployed" as AppStatus };
  await database(env).insert(apps).values(row);
  return (await getApp(env, app.id))!;
}

export type AppSettings = Partial<Pick<AppRow, "name" | "repository" | "branch" | "rootDirectory" | "dockerfilePath" | "subdomain">>;

export async function updateAppSettings(env: Env, id: string, settings: AppSettings): Promise<void> {
  if (Object.keys(settings).length > 0) await database(env).update(apps).set(settings).where(eq(apps.id, id));
}

export async function latestDeploy(env: Env, appId: string): Promise<DeployRow | undefined> {
  return database(env).select().from(deploys).where(eq(deploys.appId, appId)).orderBy(desc(deploys.startedAt)).limit(1).get();
}

export async function listDeploys(env: Env, appId: string, limit = 50): Promise<DeployRow[]> {
  return database(env).select().from(deploys).where(eq(deploys.appId, appId)).orderBy(desc(deploys.startedAt)).limit(limit);
}

export async function getDeploy(env: Env, appId: string, deployId: string): Promise<DeployRow | undefined> {
  if (!isUuid(deployId)) return undefined;
  return database(env)
    .select()
    .from(deploys)
    .where(and(eq(deploys.id, deployId.toLowerCase()), eq(deploys.appId, appId)))
    .get();
}

export const DEPLOY_RUNNING: readonly DeployStatus[] = ["building", "starting"];

export interface DeployView {
  id: string;
  status: DeployStatus;
  started_at: string;
  finished_at: string | null;
  port: number | null;
  port_source: PortSource | null;
  port_reason: string | null;
  failure?: { kind: string; message: string };
}

export function viewDeploy(row: DeployRow): DeployView {
  return {
    id: row.id,
    status: row.status,
    started_at: iso(row.startedAt),
    finished_at: row.finishedAt === null ? null : iso(row.finishedAt),
    port: row.port,
    port_source: row.portSource,
    port_reason: row.portReason,
    ...(row.failure ? { failure: row.failure } : {}),
  };
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
    latest_deploy: latest ? viewDeploy(latest) : null,
    env: viewEnvState(row),
    billing: viewBilling(row),
    instance,
  };
}
