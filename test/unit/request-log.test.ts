import { describe, expect, it } from "vitest";
import { SLOW_REQUEST_MS, SUCCESS_SAMPLE_RATE, requestLogRate, shouldLogRequest } from "../../src/http/request-log";

/** Request logs: every error and slow request is logged; successes and the pending-export wait are sampled. */
describe("requestLogRate", () => {
  it.each([
    [200, 5, SUCCESS_SAMPLE_RATE, "a success is sampled"],
    [206, 5, SUCCESS_SAMPLE_RATE, "a partial download is a success"],
    [302, 5, SUCCESS_SAMPLE_RATE, "a redirect is a success"],
    [503, 5, SUCCESS_SAMPLE_RATE, "the export link's 503 is the polling protocol's wait"],
    [400, 5, 1, "a refused request is always logged"],
    [401, 5, 1, "a failed authentication is always logged"],
    [404, 5, 1, "not found is always logged"],
    [429, 5, 1, "a rate limit refusal is always logged"],
    [500, 5, 1, "an internal error is always logged"],
    [502, 5, 1, "an app that did not answer is always logged"],
    [200, SLOW_REQUEST_MS, 1, "a slow success is always logged"],
    [503, SLOW_REQUEST_MS + 1, 1, "a slow wait is always logged"],
  ])("status %i after %i ms: one line per %i request(s) (%s)", (status, ms, rate) => {
    expect(requestLogRate(status, ms)).toBe(rate);
  });
});

describe("shouldLogRequest", () => {
  it.each([
    [1, 0.999, true],
    [100, 0, true],
    [100, 0.0099, true],
    [100, 0.01, false],
    [100, 0.5, false],
  ])("rate %i, draw %f: %s", (rate, draw, logged) => {
    expect(shouldLogRequest(rate, draw)).toBe(logged);
  });
});
