import { describe, expect, it } from "vitest";
import { BuildProgress, JsonLinesDecoder, LogStreamDecoder, MAX_LOG_LINE_CHARS, demultiplexLogs, logFrame, splitTimestamp } from "../../src/runtime/docker-stream";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("JsonLinesDecoder", () => {
  it("joins lines split across chunks and skips blank or broken ones", () => {
    const decoder = new JsonLinesDecoder();
    expect(decoder.push('{"stream":"a"}\n{"str')).toEqual([{ stream: "a" }]);
    expect(decoder.push('eam":"b"}\n\nnot json\n{"aux":')).toEqual([{ stream: "b" }]);
    expect(decoder.push('{"ID":"sha256:1"}}')).toEqual([]);
    expect(decoder.flush()).toEqual([{ aux: { ID: "sha256:1" } }]);
    expect(decoder.flush()).toEqual([]);
  });
});

describe("BuildProgress", () => {
  // As Docker 20.10's legacy builder sends them: the step text and its newline arrive apart.
  const failing = [
    { stream: "Step 1/3 : FROM scratch" },
    { stream: "\n" },
    { stream: " ---> \n" },
    { stream: 'Step 2/3 : RUN ["/bin/busybox","false"]' },
    { stream: "\n" },
    { stream: " ---> Running in 91fee0516fb7\n" },
    { errorDetail: { code: 1, message: "The command '/bin/busybox false' returned a non-zero code: 1" }, error: "The command '/bin/busybox false' returned a non-zero code: 1" },
  ];

  it("gives whole lines only and names the failing step", () => {
    const progress = new BuildProgress();
    const texts = failing.map((m) => progress.feed(m).text).filter(Boolean);
    expect(texts).toEqual([
      "Step 1/3 : FROM scratch\n",
      " ---> \n",
      'Step 2/3 : RUN ["/bin/busybox","false"]\n',
      " ---> Running in 91fee0516fb7\n",
      "The command '/bin/busybox false' returned a non-zero code: 1\n",
    ]);
    expect(progress.lastStep).toBe('Step 2/3 : RUN ["/bin/busybox","false"]');
    expect(progress.error).toBe("The command '/bin/busybox false' returned a non-zero code: 1");
    expect(progress.finish()).toBeUndefined();
  });

  it("flushes a step line left without newline before the error", () => {
    const progress = new BuildProgress();
    expect(progress.feed({ stream: "Step 2/2 : COPY missing /x" })).toEqual({});
    const event = progress.feed({ errorDetail: { message: "COPY failed" } });
    expect(event).toEqual({ text: "Step 2/2 : COPY missing /x\nCOPY failed\n", error: "COPY failed" });
    expect(progress.lastStep).toBe("Step 2/2 : COPY missing /x");
  });

  it("records the image id from aux and keeps the trailing partial line for finish", () => {
    const progress = new BuildProgress();
    progress.feed({ aux: { ID: "sha256:abc" } });
    progress.feed({ stream: "Successfully tagged x:1" });
    expect(progress.imageId).toBe("sha256:abc");
    expect(progress.error).toBeUndefined();
    expect(progress.finish()).toBe("Successfully tagged x:1\n");
  });
});

describe("demultiplexLogs", () => {
  it("reads stdout and stderr frames in order", () => {
    const body = new Uint8Array([...logFrame(1, bytes("out-line\n")), ...logFrame(2, bytes("err-line\n"))]);
    expect(demultiplexLogs(body)).toBe("out-line\nerr-line\n");
  });

  it("keeps a character split across frames whole", () => {
    const euro = bytes("€\n");
    const body = new Uint8Array([...logFrame(1, euro.subarray(0, 1)), ...logFrame(1, euro.subarray(1))]);
    expect(demultiplexLogs(body)).toBe("€\n");
  });

  it("passes a TTY container's raw text through, and tolerates a cut-off frame", () => {
    expect(demultiplexLogs(bytes("plain text\n"))).toBe("plain text\n");
    expect(demultiplexLogs(new Uint8Array())).toBe("");
    expect(demultiplexLogs(logFrame(1, bytes("abcdef")).subarray(0, 11))).toBe("abc");
  });
});

describe("LogStreamDecoder (logs?timestamps=1, decoded as it arrives)", () => {
  const stamp = "2026-11-24T00:14:01.123456789Z";
  const at = Date.parse("2026-11-24T00:14:01.123Z");
  const frames = (...parts: [1 | 2, string][]) => {
    const all = parts.map(([stream, text]) => logFrame(stream, bytes(text)));
    const joined = new Uint8Array(all.reduce((n, f) => n + f.length, 0));
    let offset = 0;
    for (const f of all) joined.set(f, (offset += f.length) - f.length);
    return joined;
  };
  const feedInPieces = (body: Uint8Array, size: number) => {
    const decoder = new LogStreamDecoder();
    const out = [];
    for (let i = 0; i < body.length; i += size) out.push(...decoder.push(body.slice(i, i + size)));
    return [...out, ...decoder.flush()];
  };

  // Rule: each engine line becomes one LogLine {at, stream, text}, whatever the chunking.
  it.each([1, 3, 8, 9, 64, 4096])("gives the same lines when fed %i bytes at a time", (size) => {
    const body = frames([1, `${stamp} first\n${stamp} sec`], [2, `${stamp} on stderr\n`], [1, "ond\n"], [1, `${stamp} no newline`]);
    // stdout's "first" completes in the first frame, stderr's line in the second, "second" in the third.
    expect(feedInPieces(body, size)).toEqual([
      { at, stream: "stdout", text: "first" },
      { at, stream: "stderr", text: "on stderr" },
      { at, stream: "stdout", text: "second" },
      { at, stream: "stdout", text: "no newline" },
    ]);
  });

  it("cuts a huge line and marks it, keeping memory bounded", () => {
    const huge = "x".repeat(MAX_LOG_LINE_CHARS * 4);
    const [line] = feedInPieces(frames([1, `${stamp} ${huge}\n`]), 10_000);
    expect(line!.text.length).toBeLessThan(MAX_LOG_LINE_CHARS + 20);
    expect(line!.text.endsWith("[line cut]")).toBe(true);
  });

  it("turns bytes that are not UTF-8 into U+FFFD, and drops a CR before the newline", () => {
    const body = new Uint8Array([...logFrame(1, new Uint8Array([...bytes(`${stamp} a`), 0xff, 0xfe, ...bytes("b\r\n")]))]);
    expect(feedInPieces(body, 5)).toEqual([{ at, stream: "stdout", text: "a\uFFFD\uFFFDb" }]);
  });

  it("reads a TTY instance's raw text as stdout", () => {
    expect(feedInPieces(bytes(`${stamp} plain text line\n`), 4)).toEqual([{ at, stream: "stdout", text: "plain text line" }]);
  });

  it.each([
    ["2026-11-24T00:14:01Z hello", { at: Date.parse("2026-11-24T00:14:01Z"), text: "hello" }],
    ["2026-11-24T00:14:01.5+01:00 hi", { at: Date.parse("2026-11-24T00:14:01.500+01:00"), text: "hi" }],
    ["no stamp here", { at: 0, text: "no stamp here" }],
  ])("splitTimestamp(%j)", (line, expected) => {
    expect(splitTimestamp(line)).toEqual(expected);
  });
});
