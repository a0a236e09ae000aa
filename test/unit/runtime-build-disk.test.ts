import { describe, expect, it } from "vitest";
import { type BuildDiskEvent, buildDiskEvent, buildDiskMessage } from "../../src/runtime/build-disk";

// docs/security.md, "Builds and source fetches": a build whose image grows past
// BUILD_DISK_MB (base image included) is stopped and the deploy fails saying so. The classic
// builder's output names each step's container and each committed layer; those are measured.

describe("buildDiskEvent", () => {
  it.each<[string, BuildDiskEvent | null]>([
    [" ---> Running in 1c60ed90fc79", { running: "1c60ed90fc79" }],
    [" ---> 16394fe493ab", { layer: "16394fe493ab" }],
    [" ---> Using cache", null],
    [" ---> ", null],
    ["Removing intermediate container 1c60ed90fc79", null],
    ["Step 2/4 : RUN make", null],
    ["  ---> Running in 1c60ed90fc79", null],
    [" ---> Running in ../../images", null],
    [" ---> 16394FE493AB", null],
  ])("%j", (line, expected) => {
    expect(buildDiskEvent(line)).toEqual(expected);
  });
});

describe("buildDiskMessage", () => {
  it.each<[number, string]>([
    [10240 * 1024 * 1024, "10 GiB"],
    [64 * 1024 * 1024, "64 MiB"],
    [1536 * 1024 * 1024, "1536 MiB"],
  ])("%d bytes", (bytes, size) => {
    expect(buildDiskMessage(bytes)).toBe(
      `The build was stopped: its image grew past ${size} of disk (base image included), the most a build may use (BUILD_DISK_MB). Make the image smaller, or ask the operator to raise the limit.`,
    );
  });
});
