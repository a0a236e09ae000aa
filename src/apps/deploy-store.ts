import { and, eq, inArray, isNull } from "drizzle-orm";
import { database } from "../db/client";
import { deploys } from "../db/schema";
import { DEPLOY_RUNNING, type DeployRow, deployById } from "./store";

/**
 * The writes of a deploy's own record (the `deploys` table, with src/apps/store.ts its reads and
 * src/apps/app-columns.ts the batches that write it with the app): its steps, its build mark and
 * its runner's heartbeat, a rollback's record, and the images removed.
 */

/** Writes columns of a deploy still running (`building` or `starting`); false when it ended meanwhile. */
export async function updateRunningDeploy(env: Env, id: string, set: Partial<typeof deploys.$inferInsert>): Promise<boolean> {
  const rows = await database(env)
    .update(deploys)
    .set(set)
    .where(and(eq(deploys.id, id), inArray(deploys.status, [...DEPLOY_RUNNING])))
    .returning({ id: deploys.id });
  return rows.length === 1;
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
