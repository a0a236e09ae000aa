/**
 * BuildKit's progress stream as readable lines (fast rebuilds: "Decode its progress stream into
 * readable log lines"). The fixtures are real streams of `POST /build?version=2` captured from
 * Docker 20.10.24 (test/fixtures/buildkit): a fresh build, the same build from the cache, a failing
 * RUN, a Dockerfile parse error and a missing build file.
 */
import { describe, expect, it } from "vitest";
import { BuildKitProgress, MAX_PARTIAL_LINE, decodeStatusResponse, readFields } from "../../src/runtime/buildkit-progress";
import { JsonLinesDecoder } from "../../src/runtime/docker-stream";
import bogus from "../fixtures/buildkit/bogus.jsonl?raw";
import cached from "../fixtures/buildkit/cached.jsonl?raw";
import failing from "../fixtures/buildkit/failing.jsonl?raw";
import missing from "../fixtures/buildkit/missing.jsonl?raw";
import success from "../fixtures/buildkit/success.jsonl?raw";

/** Feeds a captured stream in chunks of `chunk` characters, as the engine's body may arrive. */
function replay(stream: string, chunk = 97): { progress: BuildKitProgress; text: string } {
  const progress = new BuildKitProgress();
  const lines = new JsonLinesDecoder();
  let text = "";
  for (let i = 0; i < stream.length; i += chunk) for (const m of lines.push(stream.slice(i, i + chunk))) text += progress.feed(m).text ?? "";
  for (const m of lines.flush()) text += progress.feed(m).text ?? "";
  text += progress.finish() ?? "";
  return { progress, text };
}

const RUN_STEP = '[2/3] RUN ["/bin/busybox","sh","-c","echo building step; echo to stderr >&2; printf no-newline"]';
const FAILING_STEP = '[2/2] RUN ["/bin/busybox","sh","-c","echo about to fail; exit 3"]';
const FAILING_ERROR = "executor failed running [/bin/busybox sh -c echo about to fail; exit 3]: exit code: 3";

describe("BuildKitProgress on captured streams", () => {
  it.each<[string, string, { lines: string[]; absent?: string[]; lastStep?: string; error?: string; imageId?: boolean }]>([
    [
      "a fresh build: steps numbered, the RUN's stdout and stderr line by line, DONE per step",
      success,
      {
        lines: [
          "#1 [internal] load remote build context",
          "#3 [1/3] COPY busybox /bin/busybox",
          `#4 ${RUN_STEP}`,
          "#4 building step",
          "#4 to stderr",
          "#4 no-newline",
          "#4 DONE 0.7s",
          "#5 [3/3] COPY a.txt /a.txt",
          "#6 exporting to image",
          "#6 naming to docker.io/library/bkcap-zz:1 done",
          "Successfully tagged bkcap-zz:1",
        ],
        imageId: true,
      },
    ],
    [
      "the same build again: every step CACHED once, no output re-run",
      cached,
      { lines: [`#4 ${RUN_STEP}`, "#4 CACHED", "#5 CACHED", "Successfully tagged bkcap-zz:2"], absent: ["#4 building step", "#4 DONE", "#2 DONE"], imageId: true },
    ],
    [
      "a failing RUN: its output, ERROR, the engine's sentence, and the step that failed",
      failing,
      { lines: [`#4 ${FAILING_STEP}`, "#4 about to fail", `#4 ERROR: ${FAILING_ERROR}`, FAILING_ERROR], lastStep: FAILING_STEP, error: FAILING_ERROR },
    ],
    [
      "a parse error: no step failed, the frontend's sentence is the error",
      bogus,
      { lines: ["failed to solve with frontend dockerfile.v0: failed to create LLB definition: dockerfile parse error line 3: unknown instruction: BOGUS"], error: "failed to solve with frontend dockerfile.v0: failed to create LLB definition: dockerfile parse error line 3: unknown instruction: BOGUS" },
    ],
    ["a missing build file", missing, { lines: ["#2 copy /context /"], error: "failed to solve with frontend dockerfile.v0: failed to read dockerfile: open /var/lib/docker/tmp/buildkit-mount2364382874/missing.Dockerfile: no such file or directory" }],
  ])("%s", (_name, stream, expected) => {
    for (const chunk of [1, 97, stream.length]) {
      const { progress, text } = replay(stream, chunk);
      const lines = text.split("\n");
      for (const line of expected.lines) expect(lines).toContain(line);
      for (const line of expected.absent ?? []) expect(text).not.toContain(line);
      // Every line is whole and readable: no base64, no protobuf bytes.
      expect(text).not.toMatch(/moby\.buildkit\.trace|\u0000|\uFFFD/);
      expect(text.endsWith("\n")).toBe(true);
      expect(progress.lastStep).toBe(expected.lastStep);
      expect(progress.error).toBe(expected.error);
      expect(progress.imageId !== undefined).toBe(expected.imageId ?? false);
    }
  });

  it("the steps come in the order they started, each header once", () => {
    const { text } = replay(success);
    const headers = text.split("\n").filter((l) => /^#\d+ \[/.test(l) || /^#\d+ (copy|exporting to image)/.test(l));
    expect(headers).toEqual(["#1 [internal] load remote build context", "#2 copy /context /", "#3 [1/3] COPY busybox /bin/busybox", `#4 ${RUN_STEP}`, "#5 [3/3] COPY a.txt /a.txt", "#6 exporting to image"]);
  });
});

/** Protobuf encoding for the hand-made cases below. */
const enc = new TextEncoder();
function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 128) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}
function field(n: number, value: number | string | Uint8Array): number[] {
  if (typeof value === "number") return [...varint(n * 8), ...varint(value)];
  const bytes = typeof value === "string" ? enc.encode(value) : value;
  return [...varint(n * 8 + 2), ...varint(bytes.length), ...bytes];
}
const msg = (...parts: number[][]) => new Uint8Array(parts.flat());
const trace = (bytes: Uint8Array) => ({ id: "moby.buildkit.trace", aux: btoa(String.fromCharCode(...bytes)) });

describe("the protobuf reader", () => {
  it.each<[string, Uint8Array, string]>([
    ["truncated length", new Uint8Array([0x0a, 0x05, 0x41]), "truncated field"],
    ["truncated varint", new Uint8Array([0x08, 0x80]), "truncated varint"],
    ["group wire type", new Uint8Array([0x0b]), "unsupported wire type 3"],
  ])("refuses a %s", (_name, bytes, message) => {
    expect(() => readFields(bytes)).toThrow(message);
  });

  it("reads 64-bit sizes, skips unknown fields and fixed-width values", () => {
    const status = msg(field(1, "s1"), field(2, "v1"), field(4, 2 ** 40), field(5, 2 ** 41), field(99, "future"), [0x31, 1, 2, 3, 4, 5, 6, 7, 8]);
    const decoded = decodeStatusResponse(msg(field(2, status), field(7, "unknown top-level")));
    expect(decoded.statuses).toEqual([{ id: "s1", vertex: "v1", name: "", current: 2 ** 40, total: 2 ** 41 }]);
  });

  it("a damaged trace message is skipped, not a failed build", () => {
    const progress = new BuildKitProgress();
    expect(progress.feed({ id: "moby.buildkit.trace", aux: btoa("\x0a\x7f") })).toEqual({});
    expect(progress.feed({ id: "moby.buildkit.trace", aux: "%%% not base64" })).toEqual({});
    expect(progress.error).toBeUndefined();
  });
});

describe("output that never ends a line (a malicious step)", () => {
  it("is cut into lines of at most MAX_PARTIAL_LINE characters instead of held", () => {
    const progress = new BuildKitProgress();
    const vertex = msg(field(1, "sha256:v"), field(3, "[1/1] RUN yes | tr -d '\\n'"), field(5, msg(field(1, 1))));
    progress.feed(trace(msg(field(1, vertex))));
    const chunk = "y".repeat(MAX_PARTIAL_LINE + 10);
    const out = progress.feed(trace(msg(field(3, msg(field(1, "sha256:v"), field(3, 1), field(4, enc.encode(chunk))))))).text ?? "";
    expect(out).toBe(`#1 ${"y".repeat(MAX_PARTIAL_LINE)}\n`);
    expect(progress.finish()).toBe(`#1 ${"y".repeat(10)}\n`);
  });

  it("a UTF-8 character split across two messages is decoded whole", () => {
    const progress = new BuildKitProgress();
    const bytes = enc.encode("héllo\n");
    const log = (part: Uint8Array) => trace(msg(field(3, msg(field(1, "sha256:v"), field(3, 1), field(4, part)))));
    const a = progress.feed(log(bytes.subarray(0, 2))).text ?? "";
    const b = progress.feed(log(bytes.subarray(2))).text ?? "";
    expect(a + b).toBe("#1 (step)\n#1 héllo\n");
  });
});
