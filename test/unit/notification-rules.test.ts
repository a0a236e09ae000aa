import { describe, expect, it } from "vitest";
import {
  CRASH_QUIET_MS,
  MAX_ATTEMPTS,
  RETRY_DELAYS_SECONDS,
  crashStep,
  delivered,
  domainIncident,
  errorsHigh,
  incidentStep,
  memoryStep,
  retryDelay,
  walletLow,
} from "../../src/notifications/rules";

// docs/alerts.md, "Events" and "Retries": an event is sent once per incident; app.memory_high is
// memory above 90 % of the plan's limit for 5 minutes; app.errors_high is 5xx above 5 % of at least
// 20 requests in 5 minutes; wallet.low is a balance below the renewals due within 7 days;
// deliveries are tried 6 times over about an hour.

const MIN = 60_000;
const LIMIT = 1000;

describe("incidentStep: sent once per incident", () => {
  it.each<[boolean, boolean, ReturnType<typeof incidentStep>]>([
    // open, holds now -> step
    [false, true, "open"],
    [true, true, "stay"],
    [true, false, "close"],
    [false, false, "stay"],
  ])("open %s, holds %s -> %s", (open, holds, step) => expect(incidentStep(open, holds)).toBe(step));

  it("a condition held for many checks opens one incident, and a second incident after it clears", () => {
    const looks = [false, true, true, true, false, false, true, true];
    let open = false;
    const steps = looks.map((holds) => {
      const step = incidentStep(open, holds);
      if (step === "open") open = true;
      if (step === "close") open = false;
      return step;
    });
    expect(steps).toEqual(["stay", "open", "stay", "stay", "close", "stay", "open", "stay"]);
  });
});

describe("memoryStep: above 90 % of the limit for 5 minutes", () => {
  it.each<[string, number | null, number | null, number, { since: number | null; holds: boolean }]>([
    // case, since, memory, now -> result
    ["first sample above starts the run", null, 950, 0, { since: 0, holds: false }],
    ["exactly 90 % is not above", null, 900, 0, { since: null, holds: false }],
    ["4 min 59 s above: not yet", 0, 950, 5 * MIN - 1000, { since: 0, holds: false }],
    ["5 minutes above: holds", 0, 950, 5 * MIN, { since: 0, holds: true }],
    ["a sample below ends the run", 0, 800, 6 * MIN, { since: null, holds: false }],
    ["no reading keeps the run", 0, null, 6 * MIN, { since: 0, holds: true }],
    ["no reading and no run", null, null, 6 * MIN, { since: null, holds: false }],
  ])("%s", (_case, since, memoryBytes, now, expected) => {
    expect(memoryStep(since, { memoryBytes, limitBytes: LIMIT, now })).toEqual(expected);
  });
});

describe("errorsHigh: 5xx above 5 % of at least 20 requests in 5 minutes", () => {
  const now = 10_000 * 60 + 30; // 30 s into a minute
  const minute = (ago: number, total: number, errors: number) => ({ at: (10_000 - ago) * 60, total, errors });
  it.each<[string, ReturnType<typeof minute>[], boolean]>([
    ["19 requests, all 5xx: too few to judge", [minute(0, 19, 19)], false],
    ["20 requests, 1 5xx (5 %): not above", [minute(0, 20, 1)], false],
    ["20 requests, 2 5xx (10 %): above", [minute(0, 20, 2)], true],
    ["100 requests, 6 5xx over five minutes: above", [minute(4, 50, 3), minute(0, 50, 3)], true],
    ["100 requests, 5 5xx: exactly 5 %, not above", [minute(4, 50, 3), minute(0, 50, 2)], false],
    ["errors six minutes ago are outside the window", [minute(5, 50, 50), minute(0, 20, 0)], false],
    ["120 requests, 20 5xx (the metrics e2e's mix)", [minute(1, 60, 10), minute(0, 60, 10)], true],
    ["no traffic", [], false],
  ])("%s", (_case, rows, expected) => expect(errorsHigh(rows, now)).toBe(expected));
});

describe("crashStep: a restart or a crash opens app.crashed; 10 quiet minutes close it", () => {
  it.each<[string, number | null, Parameters<typeof crashStep>[1], { lastCrashAt: number | null; holds: boolean }]>([
    ["running, no restarts", null, { state: "running", restarts: 0, previousRestarts: 0, now: 0 }, { lastCrashAt: null, holds: false }],
    ["the engine restarted it since the last look", null, { state: "running", restarts: 1, previousRestarts: 0, now: MIN }, { lastCrashAt: MIN, holds: true }],
    ["restarting now", null, { state: "restarting", restarts: 1, previousRestarts: 1, now: MIN }, { lastCrashAt: MIN, holds: true }],
    ["the engine gave up (crashed)", null, { state: "crashed", restarts: 5, previousRestarts: 5, now: MIN }, { lastCrashAt: MIN, holds: true }],
    ["a first look at an instance already restarted", null, { state: "running", restarts: 2, previousRestarts: null, now: MIN }, { lastCrashAt: MIN, holds: true }],
    ["running quietly for less than 10 minutes after", MIN, { state: "running", restarts: 1, previousRestarts: 1, now: MIN + CRASH_QUIET_MS - 1 }, { lastCrashAt: MIN, holds: true }],
    ["10 quiet minutes clear it", MIN, { state: "running", restarts: 1, previousRestarts: 1, now: MIN + CRASH_QUIET_MS }, { lastCrashAt: null, holds: false }],
  ])("%s", (_case, last, look, expected) => expect(crashStep(last, look)).toEqual(expected));
});

describe("walletLow: the balance below the renewals due within 7 days", () => {
  it.each<[number, number[], boolean]>([
    [500, [], false],
    [0, [], false],
    [499, [500], true],
    [500, [500], false],
    [999, [500, 500], true],
    [1000, [500, 500], false],
  ])("balance %i, due %j -> %s", (balance, due, expected) => expect(walletLow(balance, due)).toBe(expected));
});

describe("retryDelay: 6 tries over about an hour", () => {
  it.each<[number, number | null]>([
    [0, null],
    [1, 10],
    [2, 60],
    [3, 300],
    [4, 900],
    [5, 2700],
    [6, null],
    [7, null],
  ])("after %i failed tries, wait %s s", (attempts, delay) => expect(retryDelay(attempts)).toBe(delay));

  it("spans at least an hour with at least 5 tries", () => {
    expect(MAX_ATTEMPTS).toBeGreaterThanOrEqual(5);
    expect(RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3600);
  });

  it.each<[number, boolean]>([
    [200, true],
    [204, true],
    [299, true],
    [301, false],
    [404, false],
    [500, false],
  ])("HTTP %i delivered: %s", (status, ok) => expect(delivered(status)).toBe(ok));
});

describe("domainIncident: a custom domain that served moving to error", () => {
  it.each<[string, string, ReturnType<typeof domainIncident>]>([
    ["active", "error", "open"],
    ["verifying", "error", "open"],
    ["pending_dns", "error", null],
    ["error", "error", null],
    ["error", "active", "close"],
    ["verifying", "active", "close"],
    ["active", "active", null],
    ["pending_dns", "verifying", null],
  ])("%s -> %s: %s", (from, to, step) => expect(domainIncident(from, to)).toBe(step));
});
