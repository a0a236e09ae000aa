import { type SQL, and, eq, inArray, isNull, sql } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { database } from "../db/client";
import { type DeployKind, apps, deploys } from "../db/schema";
import type { Instance } from "../runtime/types";
import type { HealthCheckSettings, HealthRecord } from "./health";
import type { PlanId } from "./plans";
import { type NewRetireRow, retireRowStatement } from "./retire-ledger";
import { type AppRow, DEPLOY_RUNNING, type DeployRow, runsInstance } from "./store";

/**
 * The writers of an app's columns: one named writer per change, each called by the app's
 * controller or by the src/apps module doing that change for it (test/unit/table-owners.test.ts
 * fails when a module outside src/apps imports one). Moving the app to another instance is one
 * compare-and-set, `switchInstance`, whatever the change (deploy, start, change plan, a variable
 * set applied, the reconciler's restore).
 */

/** Columns of an app a writer may set. */
export type AppColumns = Partial<Omit<typeof apps.$inferInsert, "id" | "accountId" | "createdAt">>;

/** The columns naming an app's serving instance and where it answers (engine, node, port). */
export function instanceColumns(instance: Instance): Pick<AppColumns, "instanceId" | "instanceUrl" | "instanceEngine" | "instanceNode" | "instancePort"> & { instanceId: string } {
  const address = instance.address;
  return { instanceId: instance.id, instanceUrl: instance.url, instanceEngine: address?.engine ?? null, instanceNode: address?.node ?? null, instancePort: address?.port ?? null };
}

function statement(env: Env, query: { sql: string; params: unknown[] }): D1PreparedStatement {
  return env.DB.prepare(query.sql).bind(...query.params);
}

/** The app's row, while it still runs `instanceId` (null: none). */
function runningWhere(id: string, instanceId: string | null): SQL {
  return and(eq(apps.id, id), instanceId === null ? isNull(apps.instanceId) : eq(apps.instanceId, instanceId))!;
}

/** What else lands in a switch's batch: the replaced instance's retire row, and statements with their own conditions (a deploy's records). */
export interface SwitchExtras {
  retire?: NewRetireRow | null;
  statements?: D1PreparedStatement[];
}

/**
 * A switch as statements of one D1 batch, the app's write first: the app takes `next` only while
 * it still runs `expected`; the retire row lands only once the app runs `next.instanceId`. With
 * `paid` (a charge's condition, src/billing/ledger.ts chargeWith) every write also needs the charge.
 */
export function switchStatements(env: Env, appId: string, next: AppColumns, expected: string | null, extras: SwitchExtras = {}, paid?: SQL): D1PreparedStatement[] {
  const where = paid ? and(runningWhere(appId, expected), paid)! : runningWhere(appId, expected);
  const write = database(env).update(apps).set(next).where(where).returning({ id: apps.id });
  const retire = extras.retire && next.instanceId ? [retireRowStatement(env, extras.retire, runsInstance(appId, next.instanceId))] : [];
  return [statement(env, write.toSQL()), ...(extras.statements ?? []), ...retire];
}

/**
 * The one compare-and-set that moves an app to another instance (or, for a deploy of a stopped
 * app, to another image): `next` is written only while the app still runs `expected`, and the
 * extras land in the same batch, only if it did. True when switched.
 */
export async function switchInstance(env: Env, app: { id: string }, next: AppColumns, expected: string | null, extras: SwitchExtras = {}): Promise<boolean> {
  const [switched] = await env.DB.batch(switchStatements(env, app.id, next, expected, extras));
  return switched!.results.length === 1;
}

/**
 * A deploy goes live: the app takes its image (and, with `set`, its new instance) through the
 * switch on `replaces`; in the same batch the deploy becomes `live` and the one before
 * `superseded`, only if the switch landed. False when the app no longer held `replaces`.
 */
export async function recordLive(env: Env, deploy: DeployRow, app: AppRow, set: AppColumns, replaces: string | null, now: number, retire: NewRetireRow | null = null): Promise<boolean> {
  const db = database(env);
  const landed = sql`EXISTS (SELECT 1 FROM ${apps} WHERE ${apps.id} = ${app.id} AND ${apps.liveDeployId} = ${deploy.id})`;
  const columns = { ...set, image: deploy.image, liveDeployId: deploy.id, port: deploy.port, portSource: deploy.portSource, portReason: deploy.portReason };
  // What it went live with: the plan, and the variable set its instance started with (none when built only).
  const record = { plan: set.plan ?? app.plan, envVersion: set.envAppliedVersion ?? null };
  const live = db
    .update(deploys)
    .set({ status: "live", finishedAt: now, instanceId: set.instanceId ?? null, ...record })
    .where(and(eq(deploys.id, deploy.id), landed));
  const superseded = db
    .update(deploys)
    .set({ status: "superseded" })
    .where(and(eq(deploys.id, app.liveDeployId ?? ""), eq(deploys.status, "live"), landed));
  return switchInstance(env, app, columns, replaces, { retire, statements: [statement(env, live.toSQL()), statement(env, superseded.toSQL())] });
}

/** Stop, or a renewal that could not be paid: the app's status and billing columns (src/billing/app-events.ts stopColumns). */
export async function recordStop(env: Env, appId: string, columns: AppColumns & { status: "stopped" }): Promise<void> {
  await database(env).update(apps).set(columns).where(eq(apps.id, appId));
}

/** A plan recorded on an app that runs nothing (its next start uses it). */
export async function recordPlan(env: Env, appId: string, plan: PlanId): Promise<void> {
  await database(env).update(apps).set({ plan }).where(eq(apps.id, appId));
}

/** Restart in place: where the restarted instance answers, and its health record starting again. */
export async function recordRestart(env: Env, appId: string, instance: Instance, health: HealthRecord | null): Promise<void> {
  await database(env)
    .update(apps)
    .set({ ...instanceColumns(instance), health })
    .where(eq(apps.id, appId));
}

/**
 * What the periodic check found, only while the app still runs the instance checked with the
 * check it was measured with: a verdict on the old path that ends after a PATCH saved a new one
 * (which starts the count afresh) is dropped. True when written.
 */
export async function recordHealth(env: Env, appId: string, instanceId: string | null, health: HealthRecord | null, checkedWith: HealthCheckSettings | null): Promise<boolean> {
  const sameCheck = checkedWith === null ? isNull(apps.healthCheck) : eq(apps.healthCheck, checkedWith);
  const rows = await database(env).update(apps).set({ health }).where(and(runningWhere(appId, instanceId), sameCheck)).returning({ id: apps.id });
  return rows.length === 1;
}

/** Why the control plane restarts the instance fresh (the disk watchdog), only while the app still runs it. True when written. */
export async function recordLastRestart(env: Env, appId: string, instanceId: string, lastRestart: { at: number; reason: string }): Promise<boolean> {
  const rows = await database(env).update(apps).set({ lastRestart }).where(runningWhere(appId, instanceId)).returning({ id: apps.id });
  return rows.length === 1;
}

/** A saved variable set whose instance did not take over: shown on the app page with its check's log. */
export async function recordEnvFailure(env: Env, appId: string, envFailure: { version: number; message: string; log: string; at: number }): Promise<void> {
  await database(env).update(apps).set({ envFailure }).where(eq(apps.id, appId));
}

/** The variable set's new version, as a query for the set's own D1 batch (src/apps/env-apply.ts writeEnv). */
export function envVersionWrite(env: Env, appId: string, version: number) {
  return database(env).update(apps).set({ envVersion: version }).where(eq(apps.id, appId));
}

/** The app's sealed webhook secret (src/apps/webhook-secret.ts). */
export async function saveWebhookSecret(env: Env, appId: string, sealed: NonNullable<AppRow["webhookSecret"]>): Promise<void> {
  await database(env).update(apps).set({ webhookSecret: sealed }).where(eq(apps.id, appId));
}

export type AppSettings = Partial<Pick<AppRow, "name" | "repository" | "branch" | "rootDirectory" | "dockerfilePath" | "subdomain" | "healthCheck" | "health" | "sourceToken">>;

export async function updateAppSettings(env: Env, id: string, settings: AppSettings): Promise<void> {
  if (Object.keys(settings).length > 0) await database(env).update(apps).set(settings).where(eq(apps.id, id));
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

/**
 * An app write as one statement of a charge's batch (src/billing/ledger.ts chargeWith): `paid` is
 * the ledger's condition that the charge row landed, so both land or neither; with `periodEnd`,
 * only while the paid period still ends there (a renewal run twice lands once).
 */
export function paidAppUpdate(env: Env, id: string, set: AppColumns, paid: SQL, periodEnd?: number | null): D1PreparedStatement {
  const period = periodEnd === undefined ? undefined : periodEnd === null ? isNull(apps.periodEnd) : eq(apps.periodEnd, periodEnd);
  return statement(env, database(env).update(apps).set(set).where(and(eq(apps.id, id), paid, period)).toSQL());
}

/** A new deploy record, `building`, as one statement of a charge's batch (see paidAppUpdate). */
export function paidDeployInsert(env: Env, deployId: string, appId: string, now: number, paid: SQL, kind: DeployKind = "deploy"): D1PreparedStatement {
  const condition = new SQLiteAsyncDialect().sqlToQuery(paid);
  return env.DB.prepare(`INSERT INTO deploys (id, app_id, status, kind, started_at, attempts) SELECT ?, ?, 'building', ?, ?, 0 WHERE ${condition.sql}`).bind(deployId, appId, kind, now, ...condition.params);
}

/** A new deploy record, `building`, with the app's columns, in one batch (a deploy nothing pays for). */
export async function insertDeploy(env: Env, deployId: string, appId: string, now: number, set: AppColumns, kind: DeployKind = "deploy"): Promise<void> {
  const db = database(env);
  await db.batch([db.insert(deploys).values({ id: deployId, appId, status: "building", kind, startedAt: now }), db.update(apps).set(set).where(eq(apps.id, appId))]);
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
