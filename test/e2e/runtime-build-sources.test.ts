/**
 * Builds see only what they are given, tried as a stranger would on the machine's dockerd: one
 * tenant's image holds a secret file; another tenant's repository (served by the dev forge, built
 * by the deploy's own fetch-and-build step) names that image by an id prefix, by the platform's
 * name for it, and in `COPY --from`. Each build fails with the sentence naming the line before the
 * engine starts it, and the secret never shows in the build's output; with the rule left out, the
 * engine (asked to pull every base image) still serves nothing from its store. A multi-stage build
 * from its own stages works; a build whose image grows past its disk limit is stopped saying so.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevForge, createRepository, startDevForge } from "../../scripts/dev-forge";
import { type DockerForwarder, dockerSocketAvailable, startDockerForwarder } from "../../scripts/lib/docker-forwarder";
import { BUILD_SOURCES_RULE, buildSourceRefusal } from "../../src/apps/contract/build-sources";
import { DockerRuntime } from "../../src/runtime/docker";
import { type BuildStepInput, fetchAndBuild } from "../../src/source/build-step";
import { tarStream } from "../runtime/tar";

const SOCKET = "/var/run/docker.sock";
const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const SECRET = `secret-${run}`;
const DISK_MB = 64;
const cat = `RUN ["/bin/busybox", "cat", "/secret.txt", "/s"]\n`;

let fwd: DockerForwarder;
let forge: DevForge;
let root: string;
let runtime: DockerRuntime;
let busybox: Uint8Array;
/** The victim's image, as the platform names an app's image. */
const victim = `control-plane/app-v${run}:d1`;
const images: string[] = [victim];

beforeAll(async () => {
  if (!(await dockerSocketAvailable(SOCKET))) throw new Error(`${SOCKET} is missing or not writable: install and start Docker (.ci/run does).`);
  busybox = await readFile("/bin/busybox");
  root = await mkdtemp(join(tmpdir(), "build-sources-"));
  [fwd, forge] = await Promise.all([startDockerForwarder({ socketPath: SOCKET }), startDevForge({ root, port: 0 })]);
  runtime = new DockerRuntime({ url: fwd.url, builder: "classic" });
  const built = await runtime.build({
    context: tarStream([
      { name: "Dockerfile", data: "FROM scratch\nCOPY busybox /bin/busybox\nCOPY secret.txt /secret.txt\n" },
      { name: "busybox", data: busybox, mode: 0o755 },
      { name: "secret.txt", data: `${SECRET}\n` },
    ]),
    dockerfile: "Dockerfile",
    tag: victim,
  });
  expect(built.ok).toBe(true);
}, 120_000);

afterAll(async () => {
  for (const image of images) await runtime?.removeImage(image).catch(() => undefined);
  await Promise.all([fwd?.close(), forge?.close()]);
  if (root) await rm(root, { recursive: true, force: true });
});

/** The deploy's fetch-and-build step for a repository holding `dockerfile` and busybox. */
async function deployBuild(name: string, dockerfile: string, overrides: Partial<BuildStepInput> = {}) {
  const repository = await createRepository(root, "acme", `${name}-${run}`, { Dockerfile: dockerfile, busybox }, { modes: { busybox: 0o755 }, forgeUrl: forge.url });
  const tag = `control-plane/app-${name}${run}:d1`;
  images.push(tag);
  const log: string[] = [];
  let claimed = false;
  const outcome = await fetchAndBuild({
    runtime,
    repository,
    branch: "main",
    rootDirectory: "",
    buildFile: { path: "Dockerfile", inContext: "Dockerfile" },
    tag,
    policy: { allowLocal: true },
    caps: { maxBytes: 64 * 1024 * 1024, maxEntries: 100 },
    sourceTimeoutSeconds: 30,
    buildTimeoutSeconds: 60,
    buildLimits: { memoryBytes: 256 * 1024 * 1024, cpus: 1 },
    checkBuildFile: (text) => buildSourceRefusal(text),
    mark: { claim: async () => !claimed && (claimed = true), refresh: async () => undefined, aliveAt: async () => Date.now() },
    now: Date.now,
    step: async (line) => void log.push(`==> ${line}`),
    append: async (line) => void log.push(line),
    ...overrides,
  });
  return { outcome, log: log.join("\n"), tag };
}

async function imageId(reference: string): Promise<string> {
  const res = await fetch(`${fwd.url}/images/${reference}/json`);
  return ((await res.json()) as { Id: string }).Id.replace(/^sha256:/, "");
}

describe("a build starts only from scratch, its own stages, or a registry", () => {
  it("refuses another tenant's image by id prefix, by name and in COPY --from, naming the line, before the engine builds", async () => {
    const prefix = (await imageId(victim)).slice(0, 6);
    const attacks: [string, string, string][] = [
      ["prefix", `FROM ${prefix}\n${cat}`, `Dockerfile line 1: FROM ${prefix} names an image on the build engine, not in a registry. ${BUILD_SOURCES_RULE}`],
      ["byname", `FROM ${victim}\n${cat}`, `Dockerfile line 1: FROM ${victim} names an image on the build engine, not in a registry. ${BUILD_SOURCES_RULE}`],
      ["copyfrom", `FROM scratch\nCOPY --from=${victim} /secret.txt /s\nCOPY busybox /bin/busybox\n${cat}`, `Dockerfile line 2: COPY --from=${victim} names an image on the build engine, not in a registry. ${BUILD_SOURCES_RULE}`],
    ];
    for (const [name, dockerfile, message] of attacks) {
      const { outcome, log, tag } = await deployBuild(name, dockerfile);
      expect(outcome).toEqual({ ok: false, kind: "build_failed", message });
      expect(log).not.toContain(SECRET);
      // The engine never started it: no step in the output, and no image.
      expect(log).not.toMatch(/^Step \d+\/\d+ :/m);
      expect(await runtime.hasImage(tag)).toBe(false);
    }
  }, 180_000);

  it("without the rule, the engine (pull=1) still serves no other image from its store", async () => {
    const prefix = (await imageId(victim)).slice(0, 6);
    for (const [name, dockerfile] of [
      ["pullprefix", `FROM ${prefix}\n${cat}`],
      ["pullcopy", `FROM scratch\nCOPY --from=${victim} /secret.txt /s\nCOPY busybox /bin/busybox\n${cat}`],
    ]) {
      const { outcome, log } = await deployBuild(name!, dockerfile!, { checkBuildFile: undefined });
      expect(outcome.ok).toBe(false);
      expect(log).not.toContain(SECRET);
    }
  }, 180_000);

  it("builds a multi-stage Dockerfile from its own earlier stages", async () => {
    const dockerfile =
      `FROM scratch AS build\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "sh", "-c", "echo built in stage one > /out"]\n` +
      `FROM scratch\nCOPY --from=build /bin/busybox /bin/busybox\nCOPY --from=0 /out /out\nCMD ["/bin/busybox", "cat", "/out"]\n`;
    const { outcome, log } = await deployBuild("stages", dockerfile);
    expect(outcome).toMatchObject({ ok: true });
    expect(log).toMatch(/^Step 6\/7 : COPY --from=0 \/out \/out$/m);
  }, 120_000);

  it(`stops a build whose image grows past its disk limit (${DISK_MB} MiB here) and says so`, async () => {
    const dockerfile = `FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "dd", "if=/dev/zero", "of=/fill", "bs=1048576", "count=${DISK_MB * 3}"]\n`;
    const { outcome, tag } = await deployBuild("filler", dockerfile, { buildDiskBytes: DISK_MB * 1024 * 1024 });
    expect(outcome).toEqual({
      ok: false,
      kind: "build_failed",
      message: `The build was stopped: its image grew past ${DISK_MB} MiB of disk (base image included), the most a build may use (BUILD_DISK_MB). Make the image smaller, or ask the operator to raise the limit.`,
    });
    expect(await runtime.hasImage(tag)).toBe(false);
  }, 120_000);
});
