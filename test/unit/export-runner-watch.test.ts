import { describe, expect, it } from "vitest";
import {
  DEADLINE_REASON,
  HEARTBEAT_EVERY_MS,
  heartbeatDue,
  RUNNER_SILENCE_MS,
  type RunnerVerdict,
  SILENT_REASON,
  type WatchedExport,
  watchRunner,
} from "../../src/exports/runner-watch";

// Exports after a crash: a runner silent for a minute gets its job queued once more (it goes on from
// its last checkpoint); silent again, the export fails; the deadline stays the last resort.

const T0 = Date.UTC(2030, 0, 1);
const DEADLINE = T0 + 4_950_000;
const MIN = RUNNER_SILENCE_MS;
const record = (fields: Partial<WatchedExport> = {}): WatchedExport => ({
  status: "running",
  createdAt: T0,
  deadlineAt: DEADLINE,
  runnerAliveAt: T0,
  revivals: 0,
  ...fields,
});

describe("watchRunner", () => {
  it.each<[string, WatchedExport | null, number, RunnerVerdict]>([
    ["no export", null, T0, { action: "none" }],
    ["ready", record({ status: "ready" }), T0 + 10 * MIN, { action: "none" }],
    ["failed", record({ status: "failed" }), T0 + 10 * MIN, { action: "none" }],
    ["expired", record({ status: "expired" }), T0 + 10 * MIN, { action: "none" }],
    ["running, beat just now", record(), T0, { action: "wait", checkAt: T0 + MIN }],
    ["running, 1 ms short of a minute's silence", record(), T0 + MIN - 1, { action: "wait", checkAt: T0 + MIN }],
    ["running, silent a minute", record(), T0 + MIN, { action: "revive", checkAt: T0 + 2 * MIN }],
    ["pending, never claimed for a minute (its message lost)", record({ status: "pending" }), T0 + MIN, { action: "revive", checkAt: T0 + 2 * MIN }],
    ["pending, from before the column: its creation counts", record({ status: "pending", runnerAliveAt: null }), T0 + MIN, { action: "revive", checkAt: T0 + 2 * MIN }],
    ["revived, the new try not heard from yet", record({ revivals: 1, runnerAliveAt: T0 + MIN }), T0 + 2 * MIN - 1, { action: "wait", checkAt: T0 + 2 * MIN }],
    ["revived, then silent a minute", record({ revivals: 1, runnerAliveAt: T0 + MIN }), T0 + 2 * MIN, { action: "fail", reason: SILENT_REASON }],
    ["revived and beating", record({ revivals: 1, runnerAliveAt: T0 + 5 * MIN }), T0 + 5 * MIN + 1, { action: "wait", checkAt: T0 + 6 * MIN }],
    ["a retry due in 80 s is no silence", record({ runnerAliveAt: T0 + 80_000 }), T0 + 100_000, { action: "wait", checkAt: T0 + 80_000 + MIN }],
    ["running, alive, at its deadline", record({ runnerAliveAt: DEADLINE - 1 }), DEADLINE, { action: "fail", reason: DEADLINE_REASON }],
    ["alive, the next look no later than the deadline", record({ runnerAliveAt: DEADLINE - 1000 }), DEADLINE - 1000, { action: "wait", checkAt: DEADLINE }],
    ["silent near the deadline: revived, looked at again by the deadline", record({ runnerAliveAt: DEADLINE - 2 * MIN }), DEADLINE - 30_000, { action: "revive", checkAt: DEADLINE }],
  ])("%s", (_name, watched, now, expected) => {
    expect(watchRunner(watched, now)).toEqual(expected);
  });

  it("never leaves an export in flight without a next look", () => {
    for (const revivals of [0, 1, 2]) {
      for (let now = T0; now < DEADLINE + MIN; now += 7_001) {
        const verdict = watchRunner(record({ revivals }), now);
        if (verdict.action === "wait" || verdict.action === "revive") expect(verdict.checkAt).toBeGreaterThan(now);
        else expect(verdict.action).toBe("fail");
      }
    }
  });
});

describe("heartbeatDue", () => {
  it.each<[string, number, number, boolean]>([
    ["just beat", T0, T0, false],
    ["1 ms short", T0, T0 + HEARTBEAT_EVERY_MS - 1, false],
    ["due", T0, T0 + HEARTBEAT_EVERY_MS, true],
    ["long overdue", T0, T0 + MIN, true],
    ["the clock stepped back", T0, T0 - 1, true],
  ])("%s", (_name, last, now, expected) => {
    expect(heartbeatDue(last, now)).toBe(expected);
  });

  it("beats several times within the silence that counts as death", () => {
    expect(RUNNER_SILENCE_MS / HEARTBEAT_EVERY_MS).toBeGreaterThanOrEqual(4);
  });
});
