import { describe, expect, it } from "vitest";
import { decideExportStart, type LatestExport } from "../../src/exports/gate-rules";

// SPEC.md endpoint 1, behaviour 2 and 3; Limits "Export cooldown" and "Concurrent exports";
// issue 3: a failed export neither blocks nor starts a cooldown; the cooldown ends exactly at the window.

const T0 = Date.UTC(2030, 0, 1);
const SETTINGS = { cooldownSeconds: 300, inFlightRetryAfterSeconds: 5 };
const DEADLINE = T0 + 4_950_000;
const at = (status: LatestExport["status"], createdAt = T0): LatestExport => ({ status, createdAt, deadlineAt: DEADLINE });

describe("decideExportStart", () => {
  it.each<[string, LatestExport | null, number, ReturnType<typeof decideExportStart>]>([
    ["never exported", null, T0, { outcome: "start" }],
    ["pending", at("pending"), T0 + 1, { outcome: "export_in_flight", retryAfterSeconds: 5 }],
    ["running, long after the window", at("running"), T0 + 3_600_000, { outcome: "export_in_flight", retryAfterSeconds: 5 }],
    ["failed a moment ago", at("failed"), T0 + 1, { outcome: "start" }],
    ["ready, at its start instant", at("ready"), T0, { outcome: "cooldown_active", retryAfterSeconds: 300 }],
    ["ready, 1 ms in", at("ready"), T0 + 1, { outcome: "cooldown_active", retryAfterSeconds: 300 }],
    ["ready, 100.2 s in", at("ready"), T0 + 100_200, { outcome: "cooldown_active", retryAfterSeconds: 200 }],
    ["ready, 299 s in", at("ready"), T0 + 299_000, { outcome: "cooldown_active", retryAfterSeconds: 1 }],
    ["ready, 1 ms before the end", at("ready"), T0 + 299_999, { outcome: "cooldown_active", retryAfterSeconds: 1 }],
    ["ready, exactly at the end of the window", at("ready"), T0 + 300_000, { outcome: "start" }],
    ["ready, after the window", at("ready"), T0 + 300_001, { outcome: "start" }],
    ["expired, inside the window", at("expired"), T0 + 10_000, { outcome: "cooldown_active", retryAfterSeconds: 290 }],
    ["ready, clock stepped back", at("ready"), T0 - 60_000, { outcome: "cooldown_active", retryAfterSeconds: 300 }],
    // Issue 16: an export past its deadline has failed; the gate fails its record and starts anew.
    ["pending, 1 ms before its deadline", at("pending"), DEADLINE - 1, { outcome: "export_in_flight", retryAfterSeconds: 5 }],
    ["pending, at its deadline", at("pending"), DEADLINE, { outcome: "start", failLatest: true }],
    ["running, after its deadline", at("running"), DEADLINE + 1, { outcome: "start", failLatest: true }],
    ["ready, long after the deadline it had while running", at("ready"), DEADLINE + 1, { outcome: "start" }],
  ])("%s", (_name, latest, now, expected) => {
    expect(decideExportStart(latest, now, SETTINGS)).toEqual(expected);
  });

  it("with no cooldown configured, only an export in flight holds a start back", () => {
    const none = { cooldownSeconds: 0, inFlightRetryAfterSeconds: 5 };
    expect(decideExportStart(at("ready"), T0, none)).toEqual({ outcome: "start" });
    expect(decideExportStart(at("pending"), T0, none)).toEqual({ outcome: "export_in_flight", retryAfterSeconds: 5 });
  });
});
