import { describe, expect, it } from "vitest";
import { ExitCode } from "../../src/cli/exit-codes";
import { type Reply, decideDownload, decideStart, networkBackoffSeconds, parseRetryAfter } from "../../src/cli/poll";

// The client rules of SPEC.md as pure decisions (src/cli/poll.ts).

const DB = "0b8f1a4e-3c2d-4e5f-8a9b-0c1d2e3f4a5b";
const NOW = Date.parse("2026-11-21T12:00:00Z");

describe("parseRetryAfter", () => {
  it.each([
    ["2", 2],
    [" 300 ", 300],
    ["0", 0],
    ["Sat, 21 Nov 2026 12:00:30 GMT", 30],
    ["Sat, 21 Nov 2026 11:59:00 GMT", 0],
    ["soon", undefined],
    ["-1", undefined],
    [null, undefined],
  ])("%s -> %s", (header, seconds) => {
    expect(parseRetryAfter(header, NOW)).toBe(seconds);
  });
});

describe("networkBackoffSeconds", () => {
  it("doubles from 1 s and stops at 16 s", () => {
    expect([1, 2, 3, 4, 5, 6].map(networkBackoffSeconds)).toEqual([1, 2, 4, 8, 16, 16]);
  });
});

describe("decideStart (SPEC.md endpoint 1 and Errors: the three 429 codes differ)", () => {
  const cases: [string, Reply, { stored?: boolean; noWait?: boolean }, string, number | undefined, RegExp][] = [
    ["200 starts the download", { status: 200 }, {}, "download", undefined, /^$/],
    ["cooldown_active is waited out in full", { status: 429, code: "cooldown_active", retryAfter: 300 }, {}, "wait", 300, /cooldown active, waiting 300 s/],
    ["cooldown_active waits in full even with a stored link", { status: 429, code: "cooldown_active", retryAfter: 290 }, { stored: true }, "wait", 290, /whole cooldown/],
    ["cooldown_active with --no-wait exits with the wait", { status: 429, code: "cooldown_active", retryAfter: 300 }, { noWait: true }, "stop", ExitCode.NOT_NOW, /exported recently \(cooldown_active\); a new export can start in 300 s/],
    ["export_in_flight polls the stored link", { status: 429, code: "export_in_flight", retryAfter: 5 }, { stored: true }, "poll-stored-link", undefined, /polling the link stored/],
    ["export_in_flight polls the stored link even with --no-wait", { status: 429, code: "export_in_flight", retryAfter: 5 }, { stored: true, noWait: true }, "poll-stored-link", undefined, /export_in_flight/],
    ["export_in_flight without a link says so and waits for it to end", { status: 429, code: "export_in_flight", retryAfter: 5 }, {}, "wait", 5, /no link for it is stored here; waiting 5 s for it to end before starting anew/],
    ["export_in_flight without a link and --no-wait exits", { status: 429, code: "export_in_flight", retryAfter: 5 }, { noWait: true }, "stop", ExitCode.NOT_NOW, /no link for it is stored here; try again in 5 s/],
    ["RATE_LIMIT_EXCEEDED waits Retry-After", { status: 429, code: "RATE_LIMIT_EXCEEDED", retryAfter: 7 }, { noWait: true }, "wait", 7, /rate limited \(RATE_LIMIT_EXCEEDED\), retrying in 7 s/],
    ["an unknown 429 code is a wait", { status: 429, code: "something_new", retryAfter: 3 }, {}, "wait", 3, /something_new/],
    ["a 429 without Retry-After waits the fallback", { status: 429 }, {}, "wait", 5, /HTTP 429/],
    ["Retry-After 0 still waits 1 s", { status: 429, code: "RATE_LIMIT_EXCEEDED", retryAfter: 0 }, {}, "wait", 1, /1 s/],
    ["401 is an auth failure", { status: 401, code: "UNAUTHORIZED" }, {}, "stop", ExitCode.AUTH, /token was refused \(UNAUTHORIZED\); check EXPORT_API_TOKEN/],
    ["403 is an auth failure", { status: 403, code: "FORBIDDEN" }, {}, "stop", ExitCode.AUTH, /FORBIDDEN/],
    ["404 names the database", { status: 404, code: "NOT_FOUND" }, {}, "stop", ExitCode.NOT_FOUND, new RegExp(`database ${DB} was not found`)],
    ["any other status ends with its code", { status: 500, code: "INTERNAL_ERROR" }, {}, "stop", ExitCode.FAILURE, /HTTP 500 \(INTERNAL_ERROR\)/],
  ];
  it.each(cases)("%s", (_name, reply, context, action, number, message) => {
    const decision = decideStart(reply, { databaseId: DB, hasStoredLink: context.stored ?? false, noWait: context.noWait ?? false });
    expect(decision.action).toBe(action);
    if (decision.action === "wait") {
      expect(decision.seconds).toBe(number);
      expect(decision.message).toMatch(message);
    }
    if (decision.action === "stop") {
      expect(decision.error.exitCode).toBe(number);
      expect(decision.error.message).toMatch(message);
      expect(decision.error.code).toBe(reply.code);
    }
    if (decision.action === "poll-stored-link") expect(decision.message).toMatch(message);
  });
});

describe("decideDownload (SPEC.md client rules for polling the link)", () => {
  const cases: [string, Reply, string, number | undefined, RegExp][] = [
    ["200 is saved", { status: 200 }, "save", undefined, /^$/],
    ["206 is saved", { status: 206 }, "save", undefined, /^$/],
    ["416 starts again from zero", { status: 416 }, "restart-from-zero", undefined, /^$/],
    ["rule 1: 503 pending waits Retry-After", { status: 503, code: "export_pending", exportStatus: "pending", retryAfter: 2 }, "wait", 2, /^export pending, retrying in 2 s$/],
    ["rule 1: 503 running waits Retry-After", { status: 503, code: "export_pending", exportStatus: "running", retryAfter: 3 }, "wait", 3, /^export running, retrying in 3 s$/],
    ["rule 1: 429 waits Retry-After", { status: 429, code: "RATE_LIMIT_EXCEEDED", retryAfter: 9 }, "wait", 9, /rate limited \(RATE_LIMIT_EXCEEDED\), retrying in 9 s/],
    ["rule 1: an unknown 429 code waits too", { status: 429, code: "new_code", retryAfter: 4 }, "wait", 4, /new_code/],
    ["rule 2: 404 is permanent, a new export must be started", { status: 404, code: "NOT_FOUND" }, "stop", ExitCode.NOT_FOUND, /export failed or does not exist \(NOT_FOUND\); a new export must be started/],
    ["rule 2: 410 says to start a new export", { status: 410, code: "EXPORT_EXPIRED" }, "stop", ExitCode.EXPIRED, /retention time \(EXPORT_EXPIRED\); start a new export/],
    ["rule 2: 401 expired says to start a new export", { status: 401, code: "SIGNED_URL_EXPIRED" }, "stop", ExitCode.EXPIRED, /expired \(SIGNED_URL_EXPIRED\); start a new export/],
    ["rule 2: 401 invalid is an auth failure", { status: 401, code: "SIGNED_URL_INVALID" }, "stop", ExitCode.AUTH, /refused \(SIGNED_URL_INVALID\)/],
    ["rule 2: 500 names INTERNAL_ERROR", { status: 500, code: "INTERNAL_ERROR" }, "stop", ExitCode.FAILURE, /could not read the finished archive \(INTERNAL_ERROR\)/],
    ["rule 2: anything else ends the loop", { status: 502 }, "stop", ExitCode.FAILURE, /^the download failed with HTTP 502$/],
  ];
  it.each(cases)("%s", (_name, reply, action, number, message) => {
    const decision = decideDownload(reply);
    expect(decision.action).toBe(action);
    if (decision.action === "wait") {
      expect(decision.seconds).toBe(number);
      expect(decision.message).toMatch(message);
    }
    if (decision.action === "stop") {
      expect(decision.error.exitCode).toBe(number);
      expect(decision.error.message).toMatch(message);
    }
  });
});
