import { describe, expect, it } from "vitest";
import { buildLimits } from "../../src/runtime/docker";
import { BUILD_MARK_REFRESH_MS, BUILD_MARK_STALE_MS, waitingTry } from "../../src/source/build-step";
import { buildTimeoutMessage, formatBytes, formatSeconds, sourceCapRefusal, sourceTimeoutMessage } from "../../src/source/limits";

// Builds and source caps (tenants sharing an engine cannot starve each other): SOURCE_MAX_BYTES of
// unpacked content, SOURCE_MAX_ENTRIES, SOURCE_TIMEOUT_SECONDS, BUILD_TIMEOUT_SECONDS, and the
// build's memory and CPU limits; each refusal is a sentence naming its setting.

const caps = { maxBytes: 10 * 1024 * 1024, maxEntries: 100 };

describe("sourceCapRefusal", () => {
  it.each<[string, number, number, string | null]>([
    ["under both caps", 1024, 10, null],
    ["exactly at both caps", 10 * 1024 * 1024, 100, null],
    ["one byte over", 10 * 1024 * 1024 + 1, 1, "The repository is larger than 10 MiB unpacked, the most a deploy takes (SOURCE_MAX_BYTES). Remove large files from the branch, or ask the operator to raise the limit."],
    ["one entry over", 1, 101, "The repository holds more than 100 files and folders, the most a deploy takes (SOURCE_MAX_ENTRIES). Remove files from the branch, or ask the operator to raise the limit."],
    ["both over: the size is named", 10 * 1024 * 1024 + 1, 101, "The repository is larger than 10 MiB unpacked, the most a deploy takes (SOURCE_MAX_BYTES). Remove large files from the branch, or ask the operator to raise the limit."],
  ])("%s", (_name, bytes, entries, expected) => {
    expect(sourceCapRefusal({ bytes, entries }, caps)).toBe(expected);
  });

  it("names large caps readably", () => {
    expect(sourceCapRefusal({ bytes: 2 * 1024 ** 3, entries: 0 }, { maxBytes: 1024 ** 3, maxEntries: 100_000 })).toContain("larger than 1 GiB unpacked");
    expect(sourceCapRefusal({ bytes: 0, entries: 100_001 }, { maxBytes: 1024 ** 3, maxEntries: 100_000 })).toContain("more than 100,000 files and folders");
  });
});

describe("formatBytes and formatSeconds", () => {
  it.each<[number, string]>([
    [1024 ** 3, "1 GiB"],
    [5 * 1024 ** 2, "5 MiB"],
    [1536 * 1024, "1,536 KiB"],
    [1500, "1,500 bytes"],
    [0, "0 bytes"],
  ])("formatBytes(%i) = %s", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it.each<[number, string]>([
    [5, "5 s"],
    [90, "90 s"],
    [900, "15 min"],
    [3600, "1 h"],
    [5400, "1 h 30 min"],
  ])("formatSeconds(%i) = %s", (seconds, text) => {
    expect(formatSeconds(seconds)).toBe(text);
  });
});

describe("deadline sentences name the limit and the repository as typed", () => {
  it.each<[string, string]>([
    [buildTimeoutMessage(900), "The build was stopped after 15 min, the most a build may take (BUILD_TIMEOUT_SECONDS). Make the build faster, or ask the operator to raise the limit."],
    [buildTimeoutMessage(20), "The build was stopped after 20 s, the most a build may take (BUILD_TIMEOUT_SECONDS). Make the build faster, or ask the operator to raise the limit."],
    [sourceTimeoutMessage("https://github.com/acme/shop", 300), "The repository https://github.com/acme/shop did not arrive within 5 min, the most a deploy waits for its source (SOURCE_TIMEOUT_SECONDS). Try again, or make the repository smaller."],
  ])("%s", (actual, expected) => {
    expect(actual).toBe(expected);
  });
});

describe("buildLimits (the build's memory and CPU on the engine)", () => {
  it.each<[string, Parameters<typeof buildLimits>[0], Record<string, string>]>([
    ["none given", undefined, {}],
    ["the pro plan's", { memoryBytes: 1024 * 1024 * 1024, cpus: 1 }, { memory: "1073741824", memswap: "1073741824", cpuperiod: "100000", cpuquota: "100000" }],
    ["half a CPU", { memoryBytes: 512 * 1024 * 1024, cpus: 0.5 }, { memory: "536870912", memswap: "536870912", cpuperiod: "100000", cpuquota: "50000" }],
    ["two CPUs", { memoryBytes: 256 * 1024 * 1024, cpus: 2 }, { memory: "268435456", memswap: "268435456", cpuperiod: "100000", cpuquota: "200000" }],
  ])("%s", (_name, limits, query) => {
    expect(buildLimits(limits)).toEqual(query);
  });
});

describe("waitingTry (a retried deploy job never builds twice)", () => {
  const now = 1_000_000;
  it.each<[string, { imageExists: boolean; markAt: number | null; waitUntil: number }, "reuse" | "wait" | "fail"]>([
    ["the earlier try's image is there", { imageExists: true, markAt: now - 5 * 60_000, waitUntil: now - 1 }, "reuse"],
    ["the mark was refreshed just now", { imageExists: false, markAt: now, waitUntil: now + 60_000 }, "wait"],
    ["the mark is exactly as old as a stale one may be", { imageExists: false, markAt: now - BUILD_MARK_STALE_MS, waitUntil: now + 60_000 }, "wait"],
    ["the mark has gone stale: the try that built has ended", { imageExists: false, markAt: now - BUILD_MARK_STALE_MS - 1, waitUntil: now + 60_000 }, "fail"],
    ["the wait has passed the build deadline", { imageExists: false, markAt: now, waitUntil: now - 1 }, "fail"],
    ["no mark at all (cleared meanwhile)", { imageExists: false, markAt: null, waitUntil: now + 60_000 }, "fail"],
  ])("%s", (_name, state, expected) => {
    expect(waitingTry({ ...state, now })).toBe(expected);
  });

  it("a running build refreshes its mark well within the time that makes it stale", () => {
    expect(BUILD_MARK_REFRESH_MS * 3).toBeLessThanOrEqual(BUILD_MARK_STALE_MS);
  });
});
