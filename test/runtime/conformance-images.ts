/** The runtime conformance suite's part on builds, and the engine's images by name and digest. */
import { expect, it } from "vitest";
import * as img from "./images";
import { tarStream } from "./tar";
import { type Suite, escape } from "./conformance-suite";

export function imageTests(suite: Suite): void {
  const { tag, run, build, images } = suite;
  it("a build succeeds, streams its steps, and the image exists", async () => {
    const output: string[] = [];
    const outcome = await build("web", output);
    expect(outcome).toEqual({ ok: true, image: tag("web") });
    expect(await suite.runtime.hasImage(tag("web"))).toBe(true);
    // The classic builder's `Step 1/4 : FROM scratch`, or BuildKit's `#3 [1/3] COPY busybox /bin/busybox`.
    expect(output.join("")).toMatch(/^Step 1\/\d+ : FROM scratch$|^#\d+ \[1\/\d+\] COPY busybox /m);
    expect(output.every((chunk) => chunk.endsWith("\n"))).toBe(true);
  });

  it("a failing RUN step is an outcome naming that step", async () => {
    const output: string[] = [];
    const outcome = await build("failing", output);
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.failedStep).toMatch(new RegExp(`^(Step \\d+/\\d+ : |\\[\\d+/\\d+\\] )${escape(img.FAILING_INSTRUCTION)}$`));
    expect(outcome.error).toMatch(/non-zero code|exit code: 1/);
    expect(output.join("")).toContain(outcome.error);
    expect(await suite.runtime.hasImage(tag("failing"))).toBe(false);
  });

  it("a missing build file is an outcome, not a throw", async () => {
    const outcome = await suite.runtime.build({ context: tarStream(img.conformanceContext(suite.busybox)), dockerfile: "no/such.Dockerfile", tag: tag("missing") });
    expect(outcome.ok).toBe(false);
  });

  it("images lists every tag of a repository and no other repository's", async () => {
    const repository = `cp-conformance-list-${run}`;
    const tags = [`${repository}:one`, `${repository}:two`];
    images.push(...tags);
    for (const t of tags) {
      const built = await suite.runtime.build({ context: tarStream(img.conformanceContext(suite.busybox), 16 * 1024), dockerfile: img.DOCKERFILES.web, tag: t });
      expect(built.ok).toBe(true);
    }
    expect((await suite.runtime.images(repository)).sort()).toEqual(tags);
    expect(await suite.runtime.images(`${repository}-other`)).toEqual([]);
    for (const t of tags) await suite.runtime.removeImage(t);
    expect(await suite.runtime.images(repository)).toEqual([]);
  });

  it("imageDigest names a built image by the engine's id; none for a missing one", async () => {
    expect(await suite.runtime.imageDigest(tag("web"))).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await suite.runtime.imageDigest(`cp-conformance-no-such-${run}:1`)).toBeNull();
  });

  it("removeImage makes the image disappear; removing again is fine", async () => {
    expect((await build("exiting")).ok).toBe(true);
    await suite.runtime.removeImage(tag("exiting"));
    expect(await suite.runtime.hasImage(tag("exiting"))).toBe(false);
    await suite.runtime.removeImage(tag("exiting"));
  });
}
