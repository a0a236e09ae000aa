import { describe, expect, it } from "vitest";
import { deadlineAfterCheckpoint, exportDeadline, type JobLimits, observedStatus } from "../../src/exports/export-state";
import { EXPORT_JOB_LIMITS, retryDelaySeconds } from "../../src/exports/job-limits";

// Issue 16: every export gets a deadline derived from the queue's retries and the job's limits;
// past it an in-flight export has failed (its link answers 404, SPEC.md export state `failed`).

const T0 = Date.UTC(2030, 0, 1);
const limits = (over: Partial<JobLimits>): JobLimits => ({ attempts: 1, invocationSeconds: 60, retryDelaySeconds: () => 0, slackSeconds: 0, ...over });

describe("exportDeadline", () => {
  it.each<[string, JobLimits, number]>([
    ["one try, no slack", limits({}), 60],
    ["one try with slack", limits({ slackSeconds: 30 }), 90],
    ["three tries, fixed backoff", limits({ attempts: 3, retryDelaySeconds: () => 10 }), 3 * 60 + 2 * 10],
    ["backoff growing per try", limits({ attempts: 3, retryDelaySeconds: (a) => a * 100 }), 3 * 60 + 100 + 200],
    // As deployed: 5 tries of 15 minutes, backoff 10 + 20 + 40 + 80 s, 5 minutes of slack.
    ["the deployed limits", EXPORT_JOB_LIMITS, 5 * 900 + 150 + 300],
  ])("%s", (_name, jobLimits, seconds) => {
    expect(exportDeadline(T0, jobLimits)).toBe(T0 + seconds * 1000);
  });

  it("uses the job's own backoff", () => {
    expect(EXPORT_JOB_LIMITS.retryDelaySeconds).toBe(retryDelaySeconds);
  });
});

// Issue 16, exports of any size: an export takes as many invocations as its size needs; each
// checkpoint sends a fresh message, so the deadline is one window of tries from the last checkpoint.
describe("deadlineAfterCheckpoint", () => {
  const window = limits({ attempts: 2, retryDelaySeconds: () => 10, slackSeconds: 30 }); // 60 + 10 + 60 + 30 = 160 s
  it.each<[string, number, number, number]>([
    ["a checkpoint soon after the start moves the deadline on by the time it took", T0 + 160_000, T0 + 5_000, T0 + 165_000],
    ["each further checkpoint moves it on again", T0 + 165_000, T0 + 100_000, T0 + 260_000],
    ["a checkpoint written at the old deadline's last moment still gets a whole window", T0 + 160_000, T0 + 159_999, T0 + 319_999],
    ["never earlier than before (a clock that went back)", T0 + 400_000, T0 + 5_000, T0 + 400_000],
  ])("%s", (_name, deadlineAt, checkpointAt, expected) => {
    expect(deadlineAfterCheckpoint(deadlineAt, checkpointAt, window)).toBe(expected);
  });

  it("with the deployed limits: 82.5 minutes after the last checkpoint", () => {
    expect(deadlineAfterCheckpoint(T0, T0 + 3_600_000, EXPORT_JOB_LIMITS)).toBe(T0 + 3_600_000 + 82.5 * 60_000);
  });
});

describe("observedStatus", () => {
  const DEADLINE = T0 + 1000;
  const RETENTION = 60;
  it.each([
    ["pending before its deadline", "pending", null, DEADLINE - 1, "pending"],
    ["pending at its deadline", "pending", null, DEADLINE, "failed"],
    ["running after its deadline", "running", null, DEADLINE + 1, "failed"],
    ["ready after the deadline it had", "ready", T0, DEADLINE + 1, "ready"],
    ["ready at the end of retention", "ready", T0, T0 + RETENTION * 1000, "expired"],
    ["failed", "failed", T0, T0, "failed"],
    ["expired", "expired", T0, T0, "expired"],
  ] as const)("%s", (_name, status, finishedAt, now, expected) => {
    expect(observedStatus({ status, finishedAt, deadlineAt: DEADLINE }, now, RETENTION)).toBe(expected);
  });
});
