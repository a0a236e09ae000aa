import type { AppStatus, DeployStatus } from "../db/schema";
import { type BillingState, periodEnded } from "../billing/rules";

/**
 * Deploy history and rollback, the rules with no I/O: which images are kept, which deploys can be
 * rolled back to, and what a rollback does with the app as it is.
 */

/** The images of this many of the app's most recent live deploys are kept for rollback. */
export const KEPT_LIVE_IMAGES = 5;

/** A deploy as the keep rule sees it. */
export interface HistoryImage {
  image: string | null;
  status: DeployStatus;
  imageRemoved: boolean;
  /** When it went live (its `finished_at`). */
  finishedAt: number | null;
}

/** Whether the deploy ever went live: it serves now, or served until a later one replaced it. */
export const wentLive = (status: DeployStatus): boolean => status === "live" || status === "superseded";

/**
 * The images of the last `keep` deploys that went live are kept; every other image a live deploy
 * ran is removed. A rollback runs an earlier deploy's image again, so images are counted once:
 * rolling back and forth between two versions keeps the three before them too. Images already
 * removed, and deploys that never went live, are not counted. `remove` lists each image once.
 */
export function imagesToKeep(history: readonly HistoryImage[], keep = KEPT_LIVE_IMAGES): { keep: string[]; remove: string[] } {
  const ran = history
    .filter((d): d is HistoryImage & { image: string } => d.image !== null && !d.imageRemoved && wentLive(d.status))
    .sort((a, b) => (b.finishedAt ?? 0) - (a.finishedAt ?? 0));
  const kept: string[] = [];
  const removed: string[] = [];
  for (const { image } of ran) {
    if (kept.includes(image) || removed.includes(image)) continue;
    (kept.length < keep ? kept : removed).push(image);
  }
  return { keep: kept, remove: removed };
}

/**
 * A deploy can be rolled back to when it went live, its image is still kept, and it is not the
 * deploy the app runs now.
 */
export function rollbackAvailable(deploy: { id: string; image: string | null; status: DeployStatus; imageRemoved: boolean }, liveDeployId: string | null): boolean {
  return deploy.image !== null && !deploy.imageRemoved && wentLive(deploy.status) && deploy.id !== liveDeployId;
}

export const ROLLBACK_UNAVAILABLE_MESSAGE = "This deploy's image is no longer kept (only the last 5 live deploys are), so it cannot be rolled back to. Deploy instead.";
export const ROLLBACK_CURRENT_MESSAGE = "This deploy is the one the app runs now.";

/**
 * What Rollback does with the app as it is (billing: a rollback is never a way to run unpaid):
 * - `switch`: a running app within its paid period (or never charged) moves to a new instance of
 *   the earlier image with its current variables, through the launch-and-switch; no charge (rule 2).
 * - `repoint`: a stopped app stays stopped; the earlier image becomes the one Start runs, and Start
 *   applies its own billing rule (rule 4, or a fresh month once the period has ended).
 * - `renew_first`: a running app whose paid period has ended is renewed first (charged the next
 *   period, or stopped when the wallet cannot pay it), then decided again.
 * - `refused`: an app that never went live has nothing to roll back to.
 */
export type RollbackPlan = "switch" | "repoint" | "renew_first" | "refused";

export function planRollback(app: { status: AppStatus; billing: BillingState }, now: number): RollbackPlan {
  if (app.status === "stopped") return "repoint";
  if (app.status !== "running") return "refused";
  return periodEnded(app.billing, now) ? "renew_first" : "switch";
}
