/**
 * Service logs as timestamped lines (issue: `logLines` of the Swarm adapter from
 * `/services/{id}/logs`): frames cut anywhere by the transport, lines spanning frames, both
 * streams, the engine's RFC 3339 nanosecond timestamps, and the query for follow/since/tail.
 */
import { describe, expect, it } from "vitest";
import { logFrame } from "../../src/runtime/docker-stream";
import { ServiceLogDecoder, parseEngineTime, serviceLogQuery, stampedLine } from "../../src/runtime/swarm-logs";

const text = (s: string) => new TextEncoder().encode(s);
const T1 = "2026-11-24T00:20:00.123456789Z";
const T1_MS = Date.UTC(2026, 10, 24, 0, 20, 0, 123);

describe("parseEngineTime", () => {
  it.each([
    [T1, T1_MS],
    ["2026-11-24T00:20:00Z", Date.UTC(2026, 10, 24, 0, 20, 0)],
    ["2026-11-24T01:20:00.5+01:00", Date.UTC(2026, 10, 24, 0, 20, 0, 500)],
    ["not a time", null],
    ["", null],
  ])("%j -> %j", (stamp, ms) => expect(parseEngineTime(stamp)).toBe(ms));
});

describe("stampedLine", () => {
  it.each([
    ["a timestamped line", `${T1} hello world`, { at: T1_MS, stream: "stdout", text: "hello world" }],
    ["a CRLF line", `${T1} crlf\r`, { at: T1_MS, stream: "stdout", text: "crlf" }],
    ["an empty line", `${T1} `, { at: T1_MS, stream: "stdout", text: "" }],
    ["no timestamp: the fallback time", "plain", { at: 7, stream: "stdout", text: "plain" }],
  ])("%s", (_name, raw, line) => expect(stampedLine(raw, "stdout", 7)).toEqual(line));
});

describe("ServiceLogDecoder", () => {
  it("splits frames into lines of their stream", () => {
    const d = new ServiceLogDecoder(() => 0);
    const body = [...logFrame(1, text(`${T1} out one\n${T1} out two\n`)), ...logFrame(2, text(`${T1} err\n`))];
    expect(d.push(new Uint8Array(body))).toEqual([
      { at: T1_MS, stream: "stdout", text: "out one" },
      { at: T1_MS, stream: "stdout", text: "out two" },
      { at: T1_MS, stream: "stderr", text: "err" },
    ]);
    expect(d.flush()).toEqual([]);
  });

  it("puts together frames cut anywhere and lines spanning frames, byte by byte", () => {
    const d = new ServiceLogDecoder(() => 0);
    const body = [...logFrame(1, text(`${T1} héllo `)), ...logFrame(2, text(`${T1} e\n`)), ...logFrame(1, text("wörld\n"))];
    const lines = body.flatMap((byte) => d.push(new Uint8Array([byte])));
    expect(lines).toEqual([
      { at: T1_MS, stream: "stderr", text: "e" },
      { at: T1_MS, stream: "stdout", text: "héllo wörld" },
    ]);
  });

  it("gives the last line without its newline when the stream ends", () => {
    const d = new ServiceLogDecoder(() => 42);
    expect(d.push(logFrame(1, text(`${T1} unfinished`)))).toEqual([]);
    expect(d.flush()).toEqual([{ at: T1_MS, stream: "stdout", text: "unfinished" }]);
  });
});

describe("serviceLogQuery", () => {
  it.each([
    ["everything", {}, { stdout: "1", stderr: "1", timestamps: "1" }],
    ["follow, since and tail", { follow: true, since: 1_700_000_000_500, tail: 10.7 }, { stdout: "1", stderr: "1", timestamps: "1", follow: "1", since: "1700000000.500", tail: "10" }],
    ["a negative tail is none", { tail: -5 }, { stdout: "1", stderr: "1", timestamps: "1", tail: "0" }],
  ])("%s", (_name, options, query) => expect(serviceLogQuery(options)).toEqual(query));
});
