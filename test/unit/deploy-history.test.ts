import { describe, expect, it } from "vitest";
import { type HistoryImage, KEPT_LIVE_IMAGES, type RollbackPlan, imagesToKeep, planRollback, rollbackAvailable } from "../../src/apps/history";
import { type BillingState, UNCHARGED } from "../../src/billing/rules";
import type { AppStatus, DeployStatus } from "../../src/db/schema";

// Deploy history and rollback: "the images of the last 5 live deploys are kept; older ones are
// removed", "Rollback on any of them runs that image ... no rebuild, no charge", and SPEC.md's
// billing effects: a rollback is never a way to run unpaid.

const d = (image: string | null, finishedAt: number, status: DeployStatus = "superseded", imageRemoved = false): HistoryImage => ({ image, status, imageRemoved, finishedAt });

describe("imagesToKeep", () => {
  it.each<[string, HistoryImage[], { keep: string[]; remove: string[] }]>([
    ["no deploys: nothing kept or removed", [], { keep: [], remove: [] }],
    ["one live deploy: kept", [d("a", 1, "live")], { keep: ["a"], remove: [] }],
    [
      "five live deploys: all kept, newest first",
      [d("a", 1), d("b", 2), d("c", 3), d("d", 4), d("e", 5, "live")],
      { keep: ["e", "d", "c", "b", "a"], remove: [] },
    ],
    [
      "a sixth: the oldest goes",
      [d("a", 1), d("b", 2), d("c", 3), d("d", 4), d("e", 5), d("f", 6, "live")],
      { keep: ["f", "e", "d", "c", "b"], remove: ["a"] },
    ],
    [
      "eight: the three oldest go, each once",
      [d("h", 8, "live"), d("a", 1), d("b", 2), d("c", 3), d("d", 4), d("e", 5), d("f", 6), d("g", 7)],
      { keep: ["h", "g", "f", "e", "d"], remove: ["c", "b", "a"] },
    ],
    [
      "a rollback runs an earlier image again: counted once, at its newest use",
      [d("a", 1), d("b", 2), d("c", 3), d("d", 4), d("e", 5), d("b", 6, "live")],
      { keep: ["b", "e", "d", "c", "a"], remove: [] },
    ],
    [
      "rolling back and forth between two images keeps the three before them",
      [d("a", 1), d("b", 2), d("c", 3), d("d", 4), d("e", 5), d("d", 6), d("e", 7), d("d", 8, "live")],
      { keep: ["d", "e", "c", "b", "a"], remove: [] },
    ],
    [
      "failed and running deploys never went live: not counted, not removed",
      [d("a", 1), d("b", 2), d("c", 3), d("d", 4), d("e", 5, "live"), d("x", 6, "failed"), d("y", 7, "building"), d(null, 8, "failed")],
      { keep: ["e", "d", "c", "b", "a"], remove: [] },
    ],
    [
      "images already removed are not counted again",
      [d("a", 1, "superseded", true), d("b", 2), d("c", 3), d("d", 4), d("e", 5), d("f", 6, "live")],
      { keep: ["f", "e", "d", "c", "b"], remove: [] },
    ],
  ])("%s", (_name, history, expected) => {
    expect(imagesToKeep(history)).toEqual(expected);
  });

  it("keeps 5 by default", () => {
    expect(KEPT_LIVE_IMAGES).toBe(5);
  });
});

describe("rollbackAvailable", () => {
  const deploy = (status: DeployStatus, image: string | null = "img", imageRemoved = false, id = "d1") => ({ id, status, image, imageRemoved });
  it.each<[string, ReturnType<typeof deploy>, string | null, boolean]>([
    ["a superseded deploy whose image is kept", deploy("superseded"), "d2", true],
    ["the deploy the app runs now", deploy("live"), "d1", false],
    ["a live deploy that is not the app's (the app's moved on meanwhile)", deploy("live"), "d2", true],
    ["its image was removed", deploy("superseded", "img", true), "d2", false],
    ["it failed", deploy("failed"), "d2", false],
    ["it is still building", deploy("building", null), "d2", false],
    ["it is starting", deploy("starting"), "d2", false],
    ["no image recorded", deploy("superseded", null), "d2", false],
  ])("%s -> %s", (_name, row, liveDeployId, expected) => {
    expect(rollbackAvailable(row, liveDeployId)).toBe(expected);
  });
});

describe("planRollback (billing: never a way to run unpaid)", () => {
  const NOW = 1_800_000_000_000;
  const DAY = 86_400_000;
  const paid: BillingState = { charged: true, periodStart: NOW - 10 * DAY, periodEnd: NOW + 20 * DAY, stoppedSince: null, paymentDue: false, paidPrice: 1200 };
  const ended: BillingState = { ...paid, periodStart: NOW - 31 * DAY, periodEnd: NOW - DAY };
  it.each<[string, AppStatus, BillingState, RollbackPlan]>([
    ["running within its paid period: switch, no charge (rule 2)", "running", paid, "switch"],
    ["running, period ends exactly now: renewed first", "running", { ...paid, periodEnd: NOW }, "renew_first"],
    ["running past its period (renewal not run yet): renewed first", "running", ended, "renew_first"],
    ["running, never charged: switch", "running", UNCHARGED, "switch"],
    ["stopped: only repointed, Start bills (rule 4)", "stopped", { ...paid, stoppedSince: NOW - DAY }, "repoint"],
    ["stopped for payment due: repointed; Start charges a fresh month", "stopped", { ...ended, stoppedSince: NOW - DAY, paymentDue: true }, "repoint"],
    ["never deployed: refused", "not_deployed", UNCHARGED, "refused"],
    ["first deploy failed: refused", "failed", paid, "refused"],
  ])("%s", (_name, status, billing, expected) => {
    expect(planRollback({ status, billing }, NOW)).toBe(expected);
  });
});
