import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextAlarm } from "../../src/apps/controls";
import {
  DEFAULT_HEALTH_CHECK,
  HEALTH_FAILURES_TO_RESTART,
  type HealthExpect,
  type HealthRecord,
  engineHealthCheck,
  expectMatches,
  failureMessage,
  healthPathProblem,
  healthUrl,
  inGrace,
  stepHealth,
  viewHealth,
} from "../../src/apps/health";
import { HealthCheckRequest } from "../../src/apps/settings";

// Health checks: the settings (a path on the app only, the answer expected, a timeout and a grace
// period at start), the rules that judge a probe, and the state machine of the periodic check
// (3 failures in a row outside the grace period restart the instance; a stopped app is `unknown`).

describe("healthPathProblem: a path on the app only", () => {
  it.each<[string, string, boolean]>([
    ["the default", "/", true],
    ["a plain path", "/healthz", true],
    ["nested with a query", "/api/health?full=1&x=a:b", true],
    ["percent-encoded space", "/a%20b", true],
    ["empty", "", false],
    ["no leading slash", "healthz", false],
    ["a full URL", "http://evil.example/", false],
    ["a protocol-relative address", "//evil.example/x", false],
    ["a dot-dot segment", "/../etc/passwd", false],
    ["a dot-dot segment inside", "/a/../b", false],
    ["an encoded dot-dot", "/%2e%2E/secret", false],
    ["a dot segment", "/./x", false],
    ["a backslash", "/a\\b", false],
    ["a space", "/a b", false],
    ["a fragment", "/a#b", false],
    ["a newline (header injection)", "/a\r\nHost: x", false],
    ["a stray percent", "/a%zz", false],
    ["an encoded slash", "/a%2f..%2fb", false],
    ["too long", `/${"a".repeat(255)}`, false],
    ["at the limit", `/${"a".repeat(254)}`, true],
    ["dots in a name are fine", "/v1.2/..health", true],
  ])("%s (%j) allowed: %s", (_label, path, ok) => {
    expect(healthPathProblem(path) === null).toBe(ok);
  });
});

describe("healthUrl: always the instance's own origin", () => {
  it.each<[string, string, string | null]>([
    ["http://127.0.0.1:32768", "/", "http://127.0.0.1:32768/"],
    ["http://127.0.0.1:32768", "/healthz?x=1", "http://127.0.0.1:32768/healthz?x=1"],
    ["http://127.0.0.1:32768", "/@evil.example/", "http://127.0.0.1:32768/@evil.example/"],
    ["http://127.0.0.1:32768", "//evil.example/", null],
    ["http://127.0.0.1:32768", "http://evil.example/", null],
    ["http://127.0.0.1:32768", "/../x", null],
  ])("%s + %j -> %j", (base, path, url) => {
    expect(healthUrl(base, path)).toBe(url);
  });
});

describe("expectMatches: any answer, or 2xx-3xx (a redirect is an answer, never followed)", () => {
  it.each<[HealthExpect, number, boolean]>([
    ["any", 200, true],
    ["any", 404, true],
    ["any", 500, true],
    ["any", 101, true],
    ["2xx-3xx", 200, true],
    ["2xx-3xx", 204, true],
    ["2xx-3xx", 302, true],
    ["2xx-3xx", 399, true],
    ["2xx-3xx", 400, false],
    ["2xx-3xx", 404, false],
    ["2xx-3xx", 503, false],
    ["2xx-3xx", 199, false],
    ["any", 0, false],
    ["any", 600, false],
  ])("%s, HTTP %i -> %s", (expect_, status, ok) => {
    expect(expectMatches(expect_, status)).toBe(ok);
  });
});

describe("inGrace: failures right after a (re)start do not count", () => {
  it.each<[number, number, number, boolean]>([
    [1000, 10, 1000, true],
    [1000, 10, 10_999, true],
    [1000, 10, 11_000, false],
    [1000, 0, 1000, false],
  ])("since %i, grace %i s, at %i -> %s", (since, grace, now, result) => {
    expect(inGrace(since, grace, now)).toBe(result);
  });
});

describe("failureMessage: the status or what went wrong, nothing of the body or the address", () => {
  const check = { path: "/healthz", expect: "2xx-3xx" as const, timeoutSeconds: 2 };
  it.each<[Parameters<typeof failureMessage>[1], string | null]>([
    [{ kind: "status", status: 200 }, null],
    [{ kind: "status", status: 503 }, "/healthz answered HTTP 503 (expected 2xx-3xx)."],
    [{ kind: "timeout" }, "/healthz did not answer within 2 s."],
    [{ kind: "error" }, "/healthz gave no HTTP answer: the connection was refused or reset."],
  ])("%j -> %j", (result, message) => {
    expect(failureMessage(check, result)).toBe(message);
  });
});

describe("HealthCheckRequest: bounds, each refusal naming its field", () => {
  it.each<[unknown, string | null]>([
    [{ path: "/healthz", expect: "2xx-3xx", timeout_seconds: 5, grace_seconds: 0 }, null],
    [{ path: "/healthz" }, null],
    [{ timeout_seconds: 0 }, "timeout_seconds"],
    [{ timeout_seconds: 61 }, "timeout_seconds"],
    [{ timeout_seconds: 1.5 }, "timeout_seconds"],
    [{ timeout_seconds: "5" }, "timeout_seconds"],
    [{ grace_seconds: -1 }, "grace_seconds"],
    [{ grace_seconds: 601 }, "grace_seconds"],
    [{ expect: "200" }, "expect"],
    [{ path: "https://evil.example/" }, "path"],
    [{ path: "/../x" }, "path"],
    [{ interval_seconds: 1 }, ""],
  ])("%j refused at: %j", (body, field) => {
    const result = HealthCheckRequest.safeParse(body);
    if (field === null) expect(result.success).toBe(true);
    else expect(result.error?.issues[0]?.path.join(".") ?? "").toBe(field);
  });
});

describe("engineHealthCheck and nextAlarm", () => {
  it("gives an engine that checks itself the app's settings, the interval and the failure count", () => {
    expect(engineHealthCheck(DEFAULT_HEALTH_CHECK, 30)).toEqual({ path: "/", expect: "any", timeoutSeconds: 5, graceSeconds: 10, intervalSeconds: 30, retries: 3 });
  });
  it.each<[number | null, number | null, number | null]>([
    [null, null, null],
    [5000, null, 5000],
    [5000, 3000, 3000],
    [2000, 3000, 2000],
  ])("health at %j, renewal at %j -> alarm at %j", (healthAt, renewAt, at) => {
    expect(nextAlarm(null, renewAt, 1000, healthAt)).toBe(at);
  });
});

describe("stepHealth: the health state machine", () => {
  const fresh = (over: Partial<HealthRecord> = {}): HealthRecord => ({ instanceId: "i1", since: 0, failures: 0, state: "healthy", lastFailure: null, ...over });
  const fail = (now: number, instanceId = "i1") => ({ kind: "probe" as const, instanceId, now, failure: "/ answered HTTP 500 (expected 2xx-3xx)." });
  const ok = (now: number, instanceId = "i1") => ({ kind: "probe" as const, instanceId, now, failure: null });

  it.each<[string, HealthRecord | null, Parameters<typeof stepHealth>[1], number, Partial<HealthRecord> | null, boolean]>([
    ["first probe of an instance, healthy", null, ok(1000), 0, { instanceId: "i1", since: 1000, failures: 0, state: "healthy" }, false],
    ["first failure outside grace counts", fresh(), fail(60_000), 10, { failures: 1, state: "healthy" }, false],
    ["second failure in a row", fresh({ failures: 1 }), fail(60_000), 10, { failures: 2, state: "healthy" }, false],
    ["third failure in a row: unhealthy, restart", fresh({ failures: 2 }), fail(60_000), 10, { failures: 3, state: "unhealthy" }, true],
    ["a fourth (the restart was refused): restart again", fresh({ failures: 3, state: "unhealthy" }), fail(60_000), 10, { failures: 4, state: "unhealthy" }, true],
    ["a failure in the grace period is recorded, not counted", fresh({ since: 55_000, failures: 2 }), fail(60_000), 10, { failures: 2, state: "healthy", lastFailure: { at: 60_000, message: "/ answered HTTP 500 (expected 2xx-3xx)." } }, false],
    ["a success clears the count and makes it healthy", fresh({ failures: 3, state: "unhealthy" }), ok(60_000), 10, { failures: 0, state: "healthy" }, false],
    ["another instance starts afresh (a deploy switched)", fresh({ failures: 2, state: "unhealthy" }), fail(60_000, "i2"), 10, { instanceId: "i2", since: 60_000, failures: 0, state: "unknown" }, false],
    ["a restart starts the grace period again, state kept", fresh({ failures: 3, state: "unhealthy" }), { kind: "restarted", now: 70_000 }, 10, { since: 70_000, failures: 0, state: "unhealthy" }, false],
    ["a failed restart is the last failure", fresh({ failures: 3, state: "unhealthy" }), { kind: "restart_failed", now: 70_000, message: "The restart failed." }, 10, { failures: 3, lastFailure: { at: 70_000, message: "The restart failed." } }, false],
    ["a restart before any check changes nothing", null, { kind: "restarted", now: 70_000 }, 10, null, false],
  ])("%s", (_label, record, event, grace, expected, restart) => {
    const step = stepHealth(record, event, grace);
    expect(step.restart).toBe(restart);
    if (expected === null) expect(step.record).toBeNull();
    else expect(step.record).toMatchObject(expected);
  });

  it("the JSON: unknown unless running with a checked instance; a stopped app is unknown", () => {
    const record = fresh({ state: "unhealthy", lastFailure: { at: 0, message: "m" } });
    expect(viewHealth({ status: "running", instanceId: "i1", health: record })).toEqual({ state: "unhealthy", last_failure: { at: "1970-01-01T00:00:00.000Z", message: "m" } });
    expect(viewHealth({ status: "stopped", instanceId: "i1", health: record })).toEqual({ state: "unknown", last_failure: null });
    expect(viewHealth({ status: "running", instanceId: "i2", health: record })).toEqual({ state: "unknown", last_failure: null });
    expect(viewHealth({ status: "running", instanceId: "i1", health: null })).toEqual({ state: "unknown", last_failure: null });
  });
});

/**
 * Model: random probe outcomes, clock steps, restarts (done or refused), stops, starts and deploys
 * (a new instance). After each step the record agrees with a plain count of failures since the
 * last success, restart or new instance, outside the grace period.
 */
describe("stepHealth model (fast-check)", () => {
  type Event =
    | { kind: "probe"; ok: boolean }
    | { kind: "clock"; ms: number }
    | { kind: "restart"; refused: boolean }
    | { kind: "stop" }
    | { kind: "start" }
    | { kind: "deploy" };
  const event: fc.Arbitrary<Event> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant("probe" as const), ok: fc.boolean() }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant("clock" as const), ms: fc.integer({ min: 1, max: 40_000 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("restart" as const), refused: fc.boolean() }) },
    { weight: 1, arbitrary: fc.constant({ kind: "stop" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "start" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "deploy" as const }) },
  );

  it("holds its invariants after every step", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), fc.integer({ min: 0, max: 30 }), (events, grace) => {
        let record: HealthRecord | null = null;
        let status: "running" | "stopped" = "running";
        let instance = 1;
        let now = 1_000_000;
        // The model: failures counted since the last success / restart / new instance, and when it began.
        let counted = 0;
        let since = now;
        let seen = false;
        let restarts = 0;
        for (const e of events) {
          if (e.kind === "clock") now += e.ms;
          else if (e.kind === "stop") status = "stopped";
          else if (e.kind === "start" || e.kind === "deploy") {
            if (e.kind === "start" && status === "running") continue;
            status = "running";
            instance += 1;
            seen = false;
          } else if (e.kind === "restart") {
            if (status !== "running" || e.refused) continue;
            const before = record;
            record = stepHealth(record, { kind: "restarted", now }, grace).record;
            if (before && before.instanceId === `i${instance}`) {
              counted = 0;
              since = now;
              expect(record?.state).toBe(before.state);
            }
          } else {
            // A stopped app is never checked.
            if (status !== "running") continue;
            const id = `i${instance}`;
            if (!seen) {
              seen = true;
              counted = 0;
              since = now;
            }
            const step = stepHealth(record, { kind: "probe", instanceId: id, now, failure: e.ok ? null : "/ answered HTTP 500 (expected 2xx-3xx)." }, grace);
            record = step.record;
            if (e.ok) counted = 0;
            else if (now >= since + grace * 1000) counted += 1;
            expect(step.restart).toBe(!e.ok && counted >= HEALTH_FAILURES_TO_RESTART && now >= since + grace * 1000);
            if (step.restart) {
              // The controller restarts it (not refused here): the count starts again.
              restarts += 1;
              record = stepHealth(record, { kind: "restarted", now }, grace).record;
              counted = 0;
              since = now;
            }
            if (e.ok) expect(record!.state).toBe("healthy");
          }
          // Invariants.
          const view = viewHealth({ status, instanceId: status === "running" ? `i${instance}` : `i${instance}`, health: record });
          if (status === "stopped") expect(view.state).toBe("unknown");
          if (record) {
            expect(record.failures).toBeGreaterThanOrEqual(0);
            expect(record.failures).toBeLessThan(HEALTH_FAILURES_TO_RESTART);
            if (record.instanceId === `i${instance}` && seen) expect(record.failures).toBe(counted);
            if (record.state === "unhealthy") expect(record.lastFailure).not.toBeNull();
            if (view.last_failure) expect(view.last_failure.message).not.toMatch(/127\.0\.0\.1|http:/);
          }
          if (!seen && status === "running") expect(view.state).toBe("unknown");
        }
        expect(restarts).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 500 },
    );
  });
});
