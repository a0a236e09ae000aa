import { type SQL, and, desc, eq, gte, inArray, isNull, lte, sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { database } from "../db/client";
import { type AppStatus, type DeployKind, type DeployStatus, apps, deploys } from "../db/schema";
import { notFound } from "../http/errors";
import { isUuid } from "../lib/time";
import type { Instance } from "../runtime/types";
import type { PlanId } from "./plans";
import { type NewRetireRow, retireRowStatement } from "./retire-ledger";

/**
 * Owner of the `apps` and `deploys` tables: every query of them is here, and no other module names
 * them (test/unit/table-owners.test.ts). Changes to an app go through its AppController, which
 * calls the writers below. The other owners: ledger_entries -> src/billing/ledger.ts,
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

/** The columns naming an app's serving instance and where it answers (engine, node, port). */
export function instanceColumns(instance: Instance): Pick<AppColumns, "instanceId" | "instanceUrl" | "instanceEngine" | "instanceNode" | "instancePort"> {
  const address = instance.address;
  return { instanceId: instance.id, instanceUrl: instance.url, instanceEngine: address?.engine ?? null, instanceNode: address?.node ?? null, instancePort: address?.port ?? null };
}

/**
 * The engine moved the app's instance (Swarm rescheduled its task, or an update converged):
 * records where it answers now, only while the app still runs that instance at its old URL.
 */
export async function moveInstance(env: Env, appId: string, instance: Instance, fromUrl: string): Promise<boolean> {
  const rows = await database(env)
    .update(apps)
    .set(instanceColumns(instance))
    .where(and(eq(apps.id, appId), eq(apps.status, "running"), eq(apps.instanceId, instance.id), eq(apps.instanceUrl, fromUrl)))
    .returning({ id: apps.id });
  return rows.length === 1;
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

export type AppSettings = Partial<Pick<AppRow, "name" | "repository" | "branch" | "rootDirectory" | "dockerfilePath" | "subdomain" | "healthCheck" | "health" | "sourceToken">>;

export async function updateAppSettings(env: Env, id: string, settings: AppSettings): Promise<void> {
  if (Object.keys(settings).length > 0) await database(env).update(apps).set(settings).where(eq(apps.id, id));
}

/** Columns of an app a writer may set. */
export type AppColumns = Partial<Omit<typeof apps.$inferInsert, "id" | "accountId" | "createdAt">>;

/**
 * What a conditional write expects to find: `instanceId` makes it a compare-and-set on the
 * instance that serves (null: none), `periodEnd` one on the paid period's end.
 */
export interface AppExpect {
  instanceId?: string | null;
  periodEnd?: number | null;
}

function appWhere(id: string, expect: AppExpect = {}): SQL {
  const conditions: SQL[] = [eq(apps.id, id)];
  if (expect.instanceId !== undefined) conditions.push(expect.instanceId === null ? isNull(apps.instanceId) : eq(apps.instanceId, expect.instanceId));
  if (expect.periodEnd !== undefined) conditions.push(expect.periodEnd === null ? isNull(apps.periodEnd) : eq(apps.periodEnd, expect.periodEnd));
  return and(...conditions)!;
}

/** The same write as a query for another owner's D1 batch (a variable save writes the version with its rows). */
export function appUpdateQuery(env: Env, id: string, set: AppColumns) {
  return database(env).update(apps).set(set).where(eq(apps.id, id));
}

/** The app's variable set version, as a query for another owner's D1 batch. */
export function envVersionQuery(env: Env, id: string) {
  return database(env).select({ version: apps.envVersion }).from(apps).where(eq(apps.id, id));
}

/** Writes columns of an app; with `expect`, only while the row still holds what it says. True when written. */
export async function updateApp(env: Env, id: string, set: AppColumns, expect?: AppExpect): Promise<boolean> {
  const rows = await database(env).update(apps).set(set).where(appWhere(id, expect)).returning({ id: apps.id });
  return rows.length === 1;
}

/** True, in a batch, once the app runs `instanceId`: the condition of a switch's retire row (src/apps/retire-ledger.ts). */
export function runsInstance(appId: string, instanceId: string): SQL {
  return sql`EXISTS (SELECT 1 FROM ${apps} WHERE ${apps.id} = ${appId} AND ${apps.instanceId} = ${instanceId})`;
}

/**
 * A switch nothing pays for (change plan, a variable set applied, a start with nothing due): the
 * app moves to its new instance as a compare-and-set on `expect`, and the row retiring the instance
 * it replaced lands in the same batch, only if the switch did. True when switched.
 */
export async function switchApp(env: Env, id: string, set: AppColumns & { instanceId: string }, expect: AppExpect, retire: NewRetireRow | null): Promise<boolean> {
  const update = database(env).update(apps).set(set).where(appWhere(id, expect)).returning({ id: apps.id });
  if (!retire) return (await update).length === 1;
  const [switched] = await env.DB.batch([statement(env, update.toSQL()), retireRowStatement(env, retire, runsInstance(id, set.instanceId))]);
  return switched!.results.length === 1;
}

/**
 * The same write as one statement of a charge's batch (src/billing/ledger.ts chargeWith): `paid`
 * is the ledger's condition that the charge row landed, so both land or neither.
 */
export function paidAppUpdate(env: Env, id: string, set: AppColumns, paid: SQL, expect?: AppExpect): D1PreparedStatement {
  return statement(env, database(env).update(apps).set(set).where(and(appWhere(id, expect), paid)).toSQL());
}

/** A new deploy record, `building`, as one statement of a charge's batch (see paidAppUpdate). */
export function paidDeployInsert(env: Env, deployId: string, appId: string, now: number, paid: SQL, kind: DeployKind = "deploy"): D1PreparedStatement {
  const condition = new SQLiteAsyncDialect().sqlToQuery(paid);
  return env.DB.prepare(`INSERT INTO deploys (id, app_id, status, kind, started_at, attempts) SELECT ?, ?, 'building', ?, ?, 0 WHERE ${condition.sql}`).bind(deployId, appId, kind, now, ...condition.params);
}

function statement(env: Env, query: { sql: string; params: unknown[] }): D1PreparedStatement {
  return env.DB.prepare(query.sql).bind(...query.params);
}

/** A new deploy record, `building`, with the app's columns, in one batch (a deploy nothing pays for). */
export async function insertDeploy(env: Env, deployId: string, appId: string, now: number, set: AppColumns, kind: DeployKind = "deploy"): Promise<void> {
  const db = database(env);
  await db.batch([db.insert(deploys).values({ id: deployId, appId, status: "building", kind, startedAt: now }), db.update(apps).set(set).where(eq(apps.id, appId))]);
}

export async function deployById(env: Env, id: string): Promise<DeployRow | undefined> {
  return database(env).select().from(deploys).where(eq(deploys.id, id)).get();
}

/** Writes columns of a deploy still running (`building` or `starting`); false when it ended meanwhile. */
export async function updateRunningDeploy(env: Env, id: string, set: Partial<typeof deploys.$inferInsert>): Promise<boolean> {
  const rows = await database(env)
    .update(deploys)
    .set(set)
    .where(and(eq(deploys.id, id), inArray(deploys.status, [...DEPLOY_RUNNING])))
    .returning({ id: deploys.id });
  return rows.length === 1;
}

/** A running deploy failed: recorded with its interpretation; a never-started app becomes `failed`. */
export async function failDeployRecord(env: Env, deploy: DeployRow, failure: { kind: string; message: string }, now: number): Promise<void> {
  const db = database(env);
  await db.batch([
    db
      .update(deploys)
      .set({ status: "failed", finishedAt: now, failure })
      .where(and(eq(deploys.id, deploy.id), inArray(deploys.status, [...DEPLOY_RUNNING]))),
    db.update(apps).set({ status: "failed" }).where(and(eq(apps.id, deploy.appId), eq(apps.status, "not_deployed"))),
  ]);
}

/**
 * A deploy goes live in one batch: the app takes its image (and, with `set`, its new instance) as a
 * compare-and-set on the instance it replaces; the deploy becomes `live` and the one before
 * `superseded`, and `retire` (the replaced instance's retire row) is written, only if that write
 * landed. False when the app no longer held `replaces`.
 */
export async function recordLive(env: Env, deploy: DeployRow, app: AppRow, set: AppColumns, replaces: string | null, now: number, retire: NewRetireRow | null = null): Promise<boolean> {
  const db = database(env);
  const landed = sql`EXISTS (SELECT 1 FROM ${apps} WHERE ${apps.id} = ${app.id} AND ${apps.liveDeployId} = ${deploy.id})`;
  const columns = { ...set, image: deploy.image, liveDeployId: deploy.id, port: deploy.port, portSource: deploy.portSource, portReason: deploy.portReason };
  // What it went live with: the plan, and the variable set its instance started with (none when built only).
  const record = { plan: set.plan ?? app.plan, envVersion: set.envAppliedVersion ?? null };
  // Prepared statements, not drizzle's batch, so that the retire row's statement can join them.
  const [switched] = await env.DB.batch([
    statement(env, db.update(apps).set(columns).where(appWhere(app.id, { instanceId: replaces })).returning({ id: apps.id }).toSQL()),
    statement(
      env,
      db
        .update(deploys)
        .set({ status: "live", finishedAt: now, instanceId: set.instanceId ?? null, ...record })
        .where(and(eq(deploys.id, deploy.id), landed))
        .toSQL(),
    ),
    statement(
      env,
      db
        .update(deploys)
        .set({ status: "superseded" })
        .where(and(eq(deploys.id, app.liveDeployId ?? ""), eq(deploys.status, "live"), landed))
        .toSQL(),
    ),
    // The instance it replaced is due for retirement (src/apps/retire-ledger.ts), if the switch landed.
    ...(retire && set.instanceId ? [retireRowStatement(env, retire, runsInstance(app.id, set.instanceId))] : []),
  ]);
  return switched!.results.length === 1;
}

/**
 * A rollback's deploy record, `starting`: the earlier deploy's image, port and commit, run again
 * (src/apps/history.ts). Written with the app's change mark held.
 */
export async function insertRollbackDeploy(env: Env, input: { id: string; from: DeployRow; now: number }): Promise<DeployRow> {
  const { from } = input;
  const row = {
    id: input.id,
    appId: from.appId,
    status: "starting" as const,
    kind: "rollback" as const,
    startedAt: input.now,
    image: from.image,
    port: from.port,
    portSource: from.portSource,
    portReason: from.portReason,
    commitSha: from.commitSha,
    commitMessage: from.commitMessage,
    imageDigest: from.imageDigest,
    rollbackOf: from.id,
  };
  await database(env).insert(deploys).values(row);
  return (await deployById(env, input.id))!;
}

/** The app's deploys as the keep rule sees them (src/apps/history.ts imagesToKeep). */
export async function imageHistory(env: Env, appId: string) {
  return database(env)
    .select({ image: deploys.image, status: deploys.status, imageRemoved: deploys.imageRemoved, finishedAt: deploys.finishedAt })
    .from(deploys)
    .where(eq(deploys.appId, appId));
}

/** Every deploy of the app that ran one of `images` no longer has it: no rollback to them. */
export async function markImagesRemoved(env: Env, appId: string, images: string[]): Promise<void> {
  if (images.length === 0) return;
  await database(env)
    .update(deploys)
    .set({ imageRemoved: true })
    .where(and(eq(deploys.appId, appId), inArray(deploys.image, images)));
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

/**
 * The build mark of a deploy (`build_alive_at`): the first try to claim it builds; a claim that
 * finds it set answers false, so a queue retry never starts a second build of the same deploy.
 */
export async function claimDeployBuild(env: Env, deployId: string, now: number): Promise<boolean> {
  const claimed = await database(env)
    .update(deploys)
    .set({ buildAliveAt: now })
    .where(and(eq(deploys.id, deployId), isNull(deploys.buildAliveAt)))
    .returning({ id: deploys.id });
  return claimed.length > 0;
}

/** Keeps a running build's mark fresh, so a retry waiting on it knows the build still runs. */
export async function refreshDeployBuild(env: Env, deployId: string, now: number): Promise<void> {
  await database(env).update(deploys).set({ buildAliveAt: now }).where(eq(deploys.id, deployId));
}

/** When the deploy's build last showed signs of life, or null when none was started. */
export async function deployBuildAliveAt(env: Env, deployId: string): Promise<number | null> {
  const row = await database(env).select({ at: deploys.buildAliveAt }).from(deploys).where(eq(deploys.id, deployId)).get();
  return row?.at ?? null;
}

/** The deploy's runner (its queue consumer) is alive: written every RUNNER_BEAT_MS while it works (src/apps/heartbeat.ts). */
export async function beatDeployRunner(env: Env, deployId: string, now: number): Promise<void> {
  await database(env)
    .update(deploys)
    .set({ runnerAliveAt: now })
    .where(and(eq(deploys.id, deployId), inArray(deploys.status, [...DEPLOY_RUNNING])))
    .run();
}

/**
 * The deploy's runner died and its job goes to a new one: its build mark is cleared (the new try
 * may build: the one that held it is gone) and its silence counts from now. False when the
 * deploy is no longer running.
 */
export async function handDeployToNewRunner(env: Env, deployId: string, now: number): Promise<boolean> {
  const rows = await database(env)
    .update(deploys)
    .set({ runnerAliveAt: now, buildAliveAt: null })
    .where(and(eq(deploys.id, deployId), inArray(deploys.status, [...DEPLOY_RUNNING])))
    .returning({ id: deploys.id });
  return rows.length === 1;
}
