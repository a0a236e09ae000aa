import { describe, expect, it } from "vitest";
import { BuildProgress, JsonLinesDecoder, demultiplexLogs, logFrame } from "../../src/runtime/docker-stream";

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
