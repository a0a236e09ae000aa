import { describe, expect, it } from "vitest";
import { RUNNER_SILENT_MS, deployStep, runnerDeadMessage, runnerVerdict } from "../../src/apps/heartbeat";

describe("runnerVerdict", () => {
  const now = 1_000_000;
  it.each([
    // lastSignAt, step, requeues, verdict
    [now, "build", 0, "alive"],
    [now - RUNNER_SILENT_MS + 1, "build", 0, "alive"],
    [now - RUNNER_SILENT_MS + 1, "switch", 5, "alive"],
    [now - RUNNER_SILENT_MS, "build", 0, "requeue"],
    [now - RUNNER_SILENT_MS, "launch", 0, "requeue"],
    [now - 10 * RUNNER_SILENT_MS, "build", 1, "fail"],
    [now - RUNNER_SILENT_MS, "launch", 1, "fail"],
    [now - RUNNER_SILENT_MS, "switch", 0, "fail"],
    [Number.NEGATIVE_INFINITY, "build", 0, "requeue"],
  ] as const)("last sign %i, step %s, %i requeues: %s", (lastSignAt, step, requeues, verdict) => {
    expect(runnerVerdict({ lastSignAt, step, requeues, now })).toBe(verdict);
  });
});

describe("deployStep and runnerDeadMessage", () => {
  it.each([
    ["building", "The deploy's runner stopped answering during the build; press Deploy to try again."],
    ["starting", "The deploy's runner stopped answering while starting the new instance; press Deploy to try again."],
  ] as const)("%s", (status, message) => {
    expect(runnerDeadMessage(deployStep(status))).toBe(message);
  });
});
