import { type SQL, and, desc, eq, gte, isNull, lte, sql } from "drizzle-orm";
import { database } from "../db/client";
import { type AppStatus, type DeployStatus, apps, deploys } from "../db/schema";
import { notFound } from "../http/errors";
import { isUuid } from "../lib/time";
import type { PlanId } from "./plans";

/**
 * Owner of the `apps` and `deploys` tables with src/apps/app-columns.ts (the app's column writers)
 * and src/apps/deploy-store.ts (a deploy's own record): every query of them is in these three, and
 * no other module names them (test/unit/table-owners.test.ts). Here: the reads, and an app's
 * record made and removed. Changes to an app go through its AppController. The other owners: ledger_entries -> src/billing/ledger.ts,
 * app_env_vars -> src/envvars/store.ts, custom_domains -> src/domains/store.ts, exports and
 * r2_cleanup -> src/exports/, databases -> src/databases/, accounts, sessions, api_tokens -> src/auth/.
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

/** What the proxy reads of an app: its state and where its instance answers. */
const ROUTE_COLUMNS = {
  id: apps.id,
  status: apps.status,
  instanceId: apps.instanceId,
  instanceUrl: apps.instanceUrl,
  instanceEngine: apps.instanceEngine,
  instanceNode: apps.instanceNode,
  instancePort: apps.instancePort,
};

/** The app answering at a subdomain, for the proxy. */
export async function appBySubdomain(env: Env, subdomain: string) {
  return database(env).select(ROUTE_COLUMNS).from(apps).where(eq(apps.subdomain, subdomain)).get();
}

/** The app a custom domain names, for the proxy (src/domains/store.ts routedApp). */
export async function appRoute(env: Env, id: string) {
  return database(env).select(ROUTE_COLUMNS).from(apps).where(eq(apps.id, id)).get();
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

/** The app's variable set version, as a query for another owner's D1 batch. */
export function envVersionQuery(env: Env, id: string) {
  return database(env).select({ version: apps.envVersion }).from(apps).where(eq(apps.id, id));
}

/** True, in a batch, once the app runs `instanceId`: the condition of a switch's retire row (src/apps/retire-ledger.ts). */
export function runsInstance(appId: string, instanceId: string): SQL {
  return sql`EXISTS (SELECT 1 FROM ${apps} WHERE ${apps.id} = ${appId} AND ${apps.instanceId} = ${instanceId})`;
}

export async function deployById(env: Env, id: string): Promise<DeployRow | undefined> {
  return database(env).select().from(deploys).where(eq(deploys.id, id)).get();
}

/**
 * The records the reconciler compares with the engine (src/apps/reconcile-plan.ts): every app, or
 * one, and the images its deploys name.
 */
export async function reconcileRecords(env: Env, appId?: string) {
  const db = database(env);
  const [rows, images] = await Promise.all([
    db.select({ id: apps.id, status: apps.status, instanceId: apps.instanceId, image: apps.image }).from(apps).where(appId === undefined ? undefined : eq(apps.id, appId)),
    db
      .select({ appId: deploys.appId, image: deploys.image, status: deploys.status, imageRemoved: deploys.imageRemoved })
      .from(deploys)
      .where(appId === undefined ? sql`${deploys.image} IS NOT NULL` : and(eq(deploys.appId, appId), sql`${deploys.image} IS NOT NULL`)),
  ]);
  return { apps: rows, deploys: images };
}

/** Running apps and their instances: what the disk watchdog measures (src/apps/disk-watch.ts). */
export async function servingApps(env: Env): Promise<{ id: string; plan: string; instanceId: string }[]> {
  const rows = await database(env).select({ id: apps.id, plan: apps.plan, instanceId: apps.instanceId }).from(apps).where(eq(apps.status, "running"));
  return rows.flatMap((r) => (r.instanceId ? [{ id: r.id, plan: r.plan, instanceId: r.instanceId }] : []));
}

/** Running, charged apps whose paid period ends by `until` (their renewal is due by then): the wallet alert (src/notifications/wallet-watch.ts). */
export async function renewalsDueBy(env: Env, until: number): Promise<{ id: string; accountId: string; plan: string }[]> {
  return database(env)
    .select({ id: apps.id, accountId: apps.accountId, plan: apps.plan })
    .from(apps)
    .where(and(eq(apps.status, "running"), eq(apps.billingCharged, true), isNull(apps.stoppedSince), lte(apps.periodEnd, until)));
}

/** Every image and instance the app's deploys name, for Delete. */
export async function deployArtifacts(env: Env, appId: string): Promise<{ image: string | null; instanceId: string | null }[]> {
  return database(env).select({ image: deploys.image, instanceId: deploys.instanceId }).from(deploys).where(eq(deploys.appId, appId));
}

/** Removes the app's record (its deploys and variables go with it, by their foreign keys). */
export async function deleteAppRecord(env: Env, appId: string): Promise<void> {
  await database(env).delete(apps).where(eq(apps.id, appId));
}

export async function latestDeploy(env: Env, appId: string): Promise<DeployRow | undefined> {
  return database(env).select().from(deploys).where(eq(deploys.appId, appId)).orderBy(desc(deploys.startedAt)).limit(1).get();
}

export async function listDeploys(env: Env, appId: string, limit = 50): Promise<DeployRow[]> {
  return database(env).select().from(deploys).where(eq(deploys.appId, appId)).orderBy(desc(deploys.startedAt)).limit(limit);
}

/** The app's deploys that finished (went live or failed) from `sinceMs` on, newest first: the Metrics tab's markers. */
export async function deploysFinishedSince(env: Env, appId: string, sinceMs: number, limit = 500): Promise<DeployRow[]> {
  return database(env).select().from(deploys).where(and(eq(deploys.appId, appId), gte(deploys.finishedAt, sinceMs))).orderBy(desc(deploys.finishedAt)).limit(limit);
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
