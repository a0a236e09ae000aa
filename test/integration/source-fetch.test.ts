import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimDeployBuild, deployBuildAliveAt } from "../../src/apps/deploy-store";
import { DockerRuntime } from "../../src/runtime";
import { type BuildMark, type BuildStepInput, fetchAndBuild } from "../../src/source/build-step";
import { fetchSourceArchive } from "../../src/source/fetch";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Source fetch and build limits (tenants sharing an engine cannot reach or starve each other):
// redirects followed by hand, at most 5, each hop under the repository's address rule; source
// caps (SOURCE_MAX_BYTES, SOURCE_MAX_ENTRIES, SOURCE_TIMEOUT_SECONDS) and the build deadline
// (BUILD_TIMEOUT_SECONDS), each refusal one sentence, nothing left on the engine; a retried
// deploy job never builds twice. The forge is the stand-in of test/fakes/fake-forge.ts.

const ON = { allowLocal: true };
let n = 0;
const unique = (name: string) => `${name}-${Date.now() % 100000}-${++n}`;

/** Makes `path` on the forge answer a redirect to `location`. */
async function redirect(path: string, location: string, status = 302): Promise<void> {
  const res = await fetch(`${env.FORGE_URL}${path}`, { method: "PUT", headers: { "X-Redirect-To": location, "X-Redirect-Status": String(status) } });
  expect(res.status).toBe(201);
}

async function text(stream: ReadableStream<Uint8Array>): Promise<number> {
  return (await new Response(stream).arrayBuffer()).byteLength;
}

describe("fetchSourceArchive on the forge stand-in", () => {
  it("follows a chain of 5 redirects on allowed addresses to the archive", async () => {
    const repository = await publishRepository(unique("target"), { "README.md": "hi" });
    const name = unique("moved");
    // The repository's URL, then hops 1 to 4, then the archive: five redirects in all.
    await redirect(`/acme/${name}/archive/main.tar.gz`, `/hop/${name}-1`);
    for (let i = 1; i < 4; i++) await redirect(`/hop/${name}-${i}`, `/hop/${name}-${i + 1}`);
    await redirect(`/hop/${name}-4`, `${repository}/archive/main.tar.gz`, 307);
    const fetched = await fetchSourceArchive(`${env.FORGE_URL}/acme/${name}`, "main", { policy: ON });
    expect(fetched.ok).toBe(true);
    if (fetched.ok) expect(await text(fetched.body)).toBeGreaterThan(0);
  });

  it("refuses a sixth redirect, naming the repository as typed", async () => {
    const name = unique("loop");
    await redirect(`/acme/${name}/archive/main.tar.gz`, `/hop/${name}-0`);
    for (let i = 0; i < 6; i++) await redirect(`/hop/${name}-${i}`, `/hop/${name}-${i + 1}`);
    const repository = `${env.FORGE_URL}/acme/${name}`;
    expect(await fetchSourceArchive(repository, "main", { policy: ON })).toEqual({
      ok: false,
      message: `The repository ${repository} could not be fetched: its forge redirected more than 5 times.`,
    });
  });

  it.each([
    ["a metadata address", "http://169.254.169.254/latest/meta-data/", "a link-local or cloud metadata address, which deploys never fetch from"],
    ["the same address in decimal", "http://2852039166/latest/meta-data/", "a link-local or cloud metadata address, which deploys never fetch from"],
    ["a metadata name", "http://metadata.google.internal/computeMetadata/v1/", "a link-local or cloud metadata address, which deploys never fetch from"],
    ["an IPv4-mapped link-local address", "http://[::ffff:169.254.169.254]/", "a link-local or cloud metadata address, which deploys never fetch from"],
  ])("refuses a redirect to %s even with local sources on", async (_name, location, clause) => {
    const name = unique("evil");
    await redirect(`/acme/${name}/archive/main.tar.gz`, location);
    const repository = `${env.FORGE_URL}/acme/${name}`;
    expect(await fetchSourceArchive(repository, "main", { policy: ON })).toEqual({ ok: false, message: `The repository ${repository} could not be fetched: its forge redirected to ${clause}.` });
  });

  it("with local sources off, refuses a loopback repository before any request", async () => {
    const repository = await publishRepository(unique("local"), { "README.md": "hi" });
    expect(await fetchSourceArchive(repository, "main", { policy: { allowLocal: false } })).toEqual({
      ok: false,
      message: `The repository ${repository} is at a loopback or private address, which deploys fetch from only when ALLOW_LOCAL_SOURCES is on.`,
    });
  });

  it("never repeats a redirect target's status or body", async () => {
    const name = unique("leak");
    // The target answers 404 with its own text: neither the status nor the text reaches the message.
    await redirect(`/acme/${name}/archive/main.tar.gz`, `${env.FORGE_URL}/hop/nothing-here-${name}`);
    const repository = `${env.FORGE_URL}/acme/${name}`;
    const fetched = await fetchSourceArchive(repository, "main", { policy: ON });
    expect(fetched).toEqual({
      ok: false,
      message: `The repository ${repository} could not be fetched: its forge did not serve the archive of branch main. Check the repository address and that the branch exists, then deploy again.`,
    });
    // The repository's own address (whose random port may hold "404") is left out of the check.
    if (!fetched.ok) expect(fetched.message.replace(repository, "<repository>")).not.toMatch(/404|Not found|hop/);
  });
});

/** A build mark held in memory, shared by the tries of one deploy. */
function memoryMark(): BuildMark & { at: number | null } {
  const mark = {
    at: null as number | null,
    claim: async () => {
      if (mark.at !== null) return false;
      mark.at = Date.now();
      return true;
    },
    refresh: async () => {
      mark.at = Date.now();
    },
    aliveAt: async () => mark.at,
  };
  return mark;
}

async function stepInput(repository: string, overrides: Partial<BuildStepInput> = {}): Promise<BuildStepInput & { log: string[] }> {
  const log: string[] = [];
  return {
    runtime: new DockerRuntime({ url: env.RUNTIME_URL }),
    repository,
    branch: "main",
    rootDirectory: "",
    buildFile: { path: "Dockerfile", inContext: "Dockerfile" },
    tag: `cp-app-limits-${unique("t")}:${crypto.randomUUID()}`,
    policy: ON,
    caps: { maxBytes: 1024 * 1024, maxEntries: 50 },
    sourceTimeoutSeconds: 10,
    buildTimeoutSeconds: 30,
    buildLimits: { memoryBytes: 1024 * 1024 * 1024, cpus: 1 },
    mark: memoryMark(),
    now: Date.now,
    step: async (line) => void log.push(`==> ${line}`),
    append: async (line) => void log.push(line),
    log,
    ...overrides,
  };
}

describe("fetchAndBuild under the source caps and the build deadline", () => {
  it("refuses a repository past SOURCE_MAX_BYTES unpacked (a file of zeros), leaving no image", async () => {
    const repository = await publishRepository(unique("zeros"), { ...httpdFiles("x"), "zeros.bin": "\0".repeat(2 * 1024 * 1024) });
    const input = await stepInput(repository);
    expect(await fetchAndBuild(input)).toEqual({
      ok: false,
      kind: "source_unavailable",
      message: "The repository is larger than 1 MiB unpacked, the most a deploy takes (SOURCE_MAX_BYTES). Remove large files from the branch, or ask the operator to raise the limit.",
    });
    expect(await input.runtime.hasImage(input.tag)).toBe(false);
  });

  it("refuses a repository past SOURCE_MAX_ENTRIES, leaving no image", async () => {
    const files = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`f/${i}.txt`, "x"]));
    const repository = await publishRepository(unique("many"), { ...httpdFiles("x"), ...files });
    const input = await stepInput(repository);
    const outcome = await fetchAndBuild(input);
    expect(outcome).toMatchObject({ ok: false, kind: "source_unavailable" });
    if (!outcome.ok) expect(outcome.message).toBe("The repository holds more than 50 files and folders, the most a deploy takes (SOURCE_MAX_ENTRIES). Remove files from the branch, or ask the operator to raise the limit.");
    expect(await input.runtime.hasImage(input.tag)).toBe(false);
  });

  it("gives up on a forge that stops sending after SOURCE_TIMEOUT_SECONDS", async () => {
    const name = unique("stall");
    expect((await fetch(`${env.FORGE_URL}/acme/${name}/archive/main.tar.gz`, { method: "PUT", headers: { "X-Stall": "1" } })).status).toBe(201);
    const repository = `${env.FORGE_URL}/acme/${name}`;
    const input = await stepInput(repository, { sourceTimeoutSeconds: 1 });
    const started = Date.now();
    expect(await fetchAndBuild(input)).toEqual({
      ok: false,
      kind: "source_unavailable",
      message: `The repository ${repository} did not arrive within 1 s, the most a deploy waits for its source (SOURCE_TIMEOUT_SECONDS). Try again, or make the repository smaller.`,
    });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(await input.runtime.hasImage(input.tag)).toBe(false);
  });

  it("stops a build at BUILD_TIMEOUT_SECONDS with the sentence naming it, and the engine keeps no image", async () => {
    const repository = await publishRepository(unique("slow"), httpdFiles("x", { buildSeconds: 4 }));
    const input = await stepInput(repository, { buildTimeoutSeconds: 1 });
    expect(await fetchAndBuild(input)).toEqual({
      ok: false,
      kind: "build_failed",
      message: "The build was stopped after 1 s, the most a build may take (BUILD_TIMEOUT_SECONDS). Make the build faster, or ask the operator to raise the limit.",
    });
    // The engine saw the build call end: it does not finish the build later.
    await new Promise((r) => setTimeout(r, 4500));
    expect(await input.runtime.hasImage(input.tag)).toBe(false);
  }, 20_000);

  it("a retried try waits for the build an earlier try holds, then reuses its image instead of building again", async () => {
    const repository = await publishRepository(unique("retry"), httpdFiles("x", { buildSeconds: 2 }));
    const first = await stepInput(repository);
    const second = await stepInput(repository, { tag: first.tag, mark: first.mark });
    const firstRun = fetchAndBuild(first);
    await new Promise((r) => setTimeout(r, 300));
    const [a, b] = await Promise.all([firstRun, fetchAndBuild(second)]);
    expect(a).toMatchObject({ ok: true, image: first.tag });
    expect(b).toMatchObject({ ok: true, image: first.tag });
    expect(b.ok && b.dockerfile).toContain("EXPOSE 8080");
    expect(first.log.filter((line) => line.startsWith("==> Building"))).toHaveLength(1);
    expect(second.log.filter((line) => line.startsWith("==> Building"))).toHaveLength(0);
    expect(second.log).toContain("==> An earlier try of this deploy started its build; waiting for it rather than building twice");
    await first.runtime.removeImage(first.tag);
  }, 20_000);

  it("a retry that finds the build mark gone stale fails the deploy rather than build twice", async () => {
    const repository = await publishRepository(unique("stale"), httpdFiles("x"));
    const mark = memoryMark();
    mark.at = Date.now() - 5 * 60_000;
    const input = await stepInput(repository, { mark });
    expect(await fetchAndBuild(input)).toEqual({
      ok: false,
      kind: "build_failed",
      message: "The build was interrupted before it finished, and a deploy is never built twice. Deploy again.",
    });
    expect(input.log.some((line) => line.startsWith("==> Building"))).toBe(false);
  });
});

describe("deploys through the queue", () => {
  it("deploy from a repository whose archive redirects within the forge goes live", async () => {
    const client = await signedUpClient();
    const target = await publishRepository(unique("real"), httpdFiles("<p>moved</p>"));
    const name = unique("renamed");
    await redirect(`/acme/${name}/archive/main.tar.gz`, `${target}/archive/main.tar.gz`, 301);
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Moved", repository: `${env.FORGE_URL}/acme/${name}` });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    const done = await waitForDeploy(client, app.id);
    expect(done.latest_deploy).toMatchObject({ status: "live" });
  });

  it("a deploy whose forge redirects to a metadata address fails with the red-panel sentence", async () => {
    const client = await signedUpClient();
    const name = unique("ssrf");
    await redirect(`/acme/${name}/archive/main.tar.gz`, "http://169.254.169.254/latest/meta-data/iam/");
    const repository = `${env.FORGE_URL}/acme/${name}`;
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Evil", repository });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    const done = await waitForDeploy(client, app.id);
    expect(done.latest_deploy).toMatchObject({
      status: "failed",
      failure: { kind: "source_unavailable", message: `The repository ${repository} could not be fetched: its forge redirected to a link-local or cloud metadata address, which deploys never fetch from.` },
    });
  });

  it("the deploy job claims the deploy's build mark, so no later try may claim it again", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("marked"), httpdFiles("<p>marked</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Marked", repository });
    const { deploy } = await client.json<{ deploy: { id: string } }>("POST", `/console/api/apps/${app.id}/deploy`);
    const done = await waitForDeploy(client, app.id);
    expect(done.latest_deploy).toMatchObject({ id: deploy.id, status: "live" });
    expect(await deployBuildAliveAt(env, deploy.id)).toEqual(expect.any(Number));
    expect(await claimDeployBuild(env, deploy.id, Date.now())).toBe(false);
  });

  it.each([
    ["https://169.254.169.254/acme/shop"],
    ["http://metadata.google.internal/acme/shop"],
    ["https://[::ffff:a9fe:a9fe]/acme/shop"],
  ])("refuses to save %s as a repository address (400 naming the field)", async (repository) => {
    const client = await signedUpClient({ credit: 0 });
    const created = await client.call("POST", "/console/api/apps", { name: "Metadata", repository });
    expect(created.status).toBe(400);
    expect(await created.json()).toEqual({
      success: false,
      code: "INVALID_REQUEST",
      error: "repository: Deploys never fetch from link-local, cloud metadata or reserved addresses; use the repository's public https:// address.",
    });
  });
});
