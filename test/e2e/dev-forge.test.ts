import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unpackTar } from "modern-tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFiles, createRepository, startDevForge, type DevForge } from "../../scripts/dev-forge";
import { resolveBuildFile } from "../../src/source/build-file";
import { probedPort } from "../../src/apps/contract/expose";
import { buildContextFromArchive } from "../../src/source/context";
import { commitApiUrl } from "../../src/source/commit";
import { archiveUrl, normalizeRepository, repositoryProblem } from "../../src/source/forge";

// A real git repository, served by the dev forge as a forge archive, becomes the build context of
// its root directory (SPEC.md App deployment contract 1 and 2).

let root: string;
let forge: DevForge;
let repository: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "dev-forge-"));
  forge = await startDevForge({ root, port: 0 });
  repository = await createRepository(
    root,
    "acme",
    "shop",
    {
      "README.md": "# shop\n",
      "web.Dockerfile": "FROM nginx\n",
      "api/Dockerfile": "FROM node:22\nEXPOSE 3000\n",
      "api/run.sh": "#!/bin/sh\nnode .\n",
      "api/src/index.js": "console.log(1)\n",
    },
    { forgeUrl: forge.url, modes: { "api/run.sh": 0o755 }, symlinks: { "api/current": "run.sh" } },
  );
});

afterAll(async () => {
  await forge?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function contextOf(branch: string, rootDirectory: string, dockerfilePath: string) {
  const buildFile = resolveBuildFile(rootDirectory, dockerfilePath);
  if (!buildFile.ok) throw new Error(buildFile.message);
  const res = await fetch(archiveUrl(repository, branch));
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/gzip");
  const { context, inspection } = buildContextFromArchive(res.body!, { rootDirectory, dockerfilePath: buildFile.path });
  const entries = await unpackTar(context, { strict: true });
  return { entries, inspection: await inspection };
}

describe("dev forge", () => {
  it("gives a repository address the Worker's rules accept", () => {
    expect(repository).toBe(`${forge.url}/acme/shop`);
    expect(repositoryProblem(repository)).toBeNull();
    expect(normalizeRepository(`${repository}.git/`)).toBe(repository);
  });

  it("serves a branch archive that becomes the root directory's build context", async () => {
    const { entries, inspection } = await contextOf("main", "api", "");
    const byName = new Map(entries.map((e) => [e.header.name, e]));
    expect([...byName.keys()].sort()).toEqual(["Dockerfile", "current", "run.sh", "src/", "src/index.js"]);
    expect((byName.get("run.sh")?.header.mode ?? 0) & 0o111).not.toBe(0);
    expect((byName.get("Dockerfile")?.header.mode ?? 0) & 0o111).toBe(0);
    expect(byName.get("current")?.header).toMatchObject({ type: "symlink", linkname: "run.sh" });
    expect(new TextDecoder().decode(byName.get("src/index.js")?.data)).toBe("console.log(1)\n");
    expect(inspection).toEqual({ dockerfile: "FROM node:22\nEXPOSE 3000\n", buildFiles: ["api/Dockerfile", "web.Dockerfile"], commitSha: expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect(probedPort(inspection.dockerfile)).toEqual({ port: 3000, source: "expose", reason: "first EXPOSE line, 3000" });
  });

  it("serves later commits, on a branch whose name has a slash", async () => {
    const sha = await commitFiles(root, "acme", "shop", { "api/Dockerfile": "FROM node:24\n" }, { branch: "feature/node-24", remove: ["web.Dockerfile"], message: "Node 24\n\nFor the API." });
    const { inspection } = await contextOf("feature/node-24", "", "api/Dockerfile");
    expect(inspection).toEqual({ dockerfile: "FROM node:24\n", buildFiles: ["api/Dockerfile"], commitSha: sha });
    // main is untouched.
    const main = await contextOf("main", "", "");
    expect(main.inspection).toEqual({ dockerfile: null, buildFiles: ["api/Dockerfile", "web.Dockerfile"], commitSha: expect.stringMatching(/^[0-9a-f]{40}$/) });
    expect(main.inspection.commitSha).not.toBe(sha);
    // Gitea's branch API gives the head commit with its message, as deploys read it.
    const res = await fetch(commitApiUrl(repository, "feature/node-24"));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: "feature/node-24", commit: { id: sha, message: "Node 24\n\nFor the API.\n" } });
    expect((await fetch(commitApiUrl(repository, "nope"))).status).toBe(404);
  });

  it.each([
    ["an unknown branch", () => archiveUrl(repository, "nope"), "No branch nope in acme/shop."],
    ["an unknown repository", () => archiveUrl(`${forge.url}/acme/other`, "main"), "No repository acme/other."],
    ["a path that is not an archive", () => `${forge.url}/acme/shop`, "Not found. Archives are at /<owner>/<repo>/archive/<branch>.tar.gz."],
  ])("answers 404 with a sentence for %s", async (_name, url, text) => {
    const res = await fetch(url());
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect((await res.text()).trim()).toBe(text);
  });
});
