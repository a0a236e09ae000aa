/**
 * Builds and source fetches under limits, end to end: a real `wrangler dev`, the machine's real
 * dockerd and the dev forge. A build past BUILD_TIMEOUT_SECONDS is cancelled on the engine (no
 * build container is left running), a repository of 50 MB of zeros is refused under a small
 * SOURCE_MAX_BYTES with nothing left on the engine, and a forge that redirects to a cloud
 * metadata address is refused without that address being fetched.
 */
import { execFile } from "node:child_process";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUSYBOX, type AppJson, type AppsStack, deployAndWait, repository, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

const BUILD_TIMEOUT_SECONDS = 6;
const SOURCE_MAX_BYTES = 5 * 1024 * 1024;

let stack: AppsStack;
let session: ConsoleSession;

beforeAll(async () => {
  stack = await startAppsStack({
    BUILD_TIMEOUT_SECONDS: String(BUILD_TIMEOUT_SECONDS),
    BUILD_MEMORY_MB: "256",
    BUILD_CPUS: "0.5",
    SOURCE_MAX_BYTES: String(SOURCE_MAX_BYTES),
  });
  session = await signedUp(stack.worker.url);
});

afterAll(async () => {
  await stack?.stop();
});

const createApp = (body: Record<string, unknown>) => session.call<AppJson>("POST", "/console/api/apps", body);

/** The ids of the containers running on the engine now whose command, as `docker ps` lists it, holds `text`. */
async function runningWith(text: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)("docker", ["ps", "--no-trunc", "--format", "{{.ID}} {{.Command}}"]);
  return stdout
    .split("\n")
    .filter((line) => line.includes(text))
    .map((line) => line.split(" ")[0]!);
}

/** Images of an app on the engine (any tag of `cp-app-<id>`). */
async function appImages(appId: string): Promise<string[]> {
  const res = await fetch(`${stack.engineUrl}/images/json?filters=${encodeURIComponent(JSON.stringify({ reference: [`cp-app-${appId}`] }))}`);
  return ((await res.json()) as { RepoTags?: string[] }[]).flatMap((image) => image.RepoTags ?? []);
}

describe("builds and sources under limits on a real engine", () => {
  it("cancels a build that sleeps past BUILD_TIMEOUT_SECONDS on the engine and fails the deploy with the sentence", async () => {
    // A marker no other container on the shared engine runs: the build step's sleep.
    const marker = `${4000 + (Date.now() % 1000)}`;
    const repo = await repository(stack, `slow-build-${Date.now() % 100000}`, {
      Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "sleep", "${marker}"]\nCMD ["/bin/busybox", "httpd", "-f", "-p", "8080"]\n`,
      busybox: BUSYBOX,
    });
    const app = await createApp({ name: "Slow build", repository: repo });
    const started = Date.now();
    await session.call("POST", `/console/api/apps/${app.id}/deploy`);
    // While it runs, the build step is a container with the build's limits (BUILD_MEMORY_MB, BUILD_CPUS).
    let building: string[] = [];
    while (building.length === 0 && Date.now() - started < BUILD_TIMEOUT_SECONDS * 1000) {
      await new Promise((r) => setTimeout(r, 250));
      building = await runningWith(`sleep ${marker}`);
    }
    expect(building).toHaveLength(1);
    const { stdout } = await promisify(execFile)("docker", ["inspect", "--format", "{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}} {{.HostConfig.CpuPeriod}} {{.HostConfig.CpuQuota}}", building[0]!]);
    expect(stdout.trim()).toBe(`${256 * 1024 * 1024} ${256 * 1024 * 1024} 100000 50000`);

    let done = await session.call<AppJson>("GET", `/console/api/apps/${app.id}`);
    while (done.deploy_in_progress) {
      await new Promise((r) => setTimeout(r, 250));
      done = await session.call<AppJson>("GET", `/console/api/apps/${app.id}`);
    }
    expect(done.latest_deploy).toMatchObject({
      status: "failed",
      failure: {
        kind: "build_failed",
        message: `The build was stopped after ${BUILD_TIMEOUT_SECONDS} s, the most a build may take (BUILD_TIMEOUT_SECONDS). Make the build faster, or ask the operator to raise the limit.`,
      },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(BUILD_TIMEOUT_SECONDS * 1000);
    // The engine stops the step once the build call ends; `docker ps` shows no build left running.
    let left = await runningWith(`sleep ${marker}`);
    for (let i = 0; i < 20 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 500));
      left = await runningWith(`sleep ${marker}`);
    }
    expect(left).toEqual([]);
    expect(await appImages(app.id)).toEqual([]);
  });

  it("refuses a repository of 50 MB of zeros under a small SOURCE_MAX_BYTES, leaving nothing on the engine", async () => {
    const repo = await repository(stack, `zeros-${Date.now() % 100000}`, {
      Dockerfile: `FROM scratch\nCOPY . /src\nCMD ["/bin/busybox", "httpd", "-f", "-p", "8080"]\n`,
      "zeros.bin": new Uint8Array(50 * 1024 * 1024),
    });
    const app = await createApp({ name: "Zeros", repository: repo });
    const done = await deployAndWait(session, app.id);
    expect(done.latest_deploy).toMatchObject({
      status: "failed",
      failure: {
        kind: "source_unavailable",
        message: "The repository is larger than 5 MiB unpacked, the most a deploy takes (SOURCE_MAX_BYTES). Remove large files from the branch, or ask the operator to raise the limit.",
      },
    });
    expect(await appImages(app.id)).toEqual([]);
    const containers = await fetch(`${stack.engineUrl}/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ label: [`control-plane.app_id=${app.id}`] }))}`);
    expect(await containers.json()).toEqual([]);
  });

  describe("a forge that redirects to a forbidden address", () => {
    let forge: Server;
    let forgeUrl: string;
    const asked: string[] = [];

    beforeAll(async () => {
      // A forge of its own: every archive request is sent on to the cloud metadata address.
      forge = createServer((req, res) => {
        asked.push(req.url ?? "");
        res.writeHead(302, { Location: "http://169.254.169.254/latest/meta-data/iam/security-credentials/" }).end("Found: secret forge text");
      });
      await new Promise<void>((ok) => forge.listen(0, "127.0.0.1", ok));
      forgeUrl = `http://127.0.0.1:${(forge.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      await new Promise((ok) => forge.close(ok));
    });

    it("is refused with a sentence naming the repository as typed, never the target's answer", async () => {
      const typed = `${forgeUrl}/acme/evil`;
      const app = await createApp({ name: "Evil forge", repository: typed });
      const done = await deployAndWait(session, app.id);
      expect(done.latest_deploy).toMatchObject({
        status: "failed",
        failure: { kind: "source_unavailable", message: `The repository ${typed} could not be fetched: its forge redirected to a link-local or cloud metadata address, which deploys never fetch from.` },
      });
      expect(done.latest_deploy!.failure!.message).not.toMatch(/302|secret forge text|169\.254/);
      // The archive once, and the branch API once for the commit a deploy records: neither
      // redirect is followed, and neither is asked again.
      expect([...asked].sort()).toEqual(["/acme/evil/archive/main.tar.gz", "/api/v1/repos/acme/evil/branches/main"]);
      expect(await appImages(app.id)).toEqual([]);
    });
  });
});
