import { describe, expect, it } from "vitest";
import {
  isBuildFileName,
  missingBuildFileMessage,
  normalizeRepoPath,
  resolveBuildFile,
  type BuildFileResult,
  type PathResult,
} from "../../src/source/build-file";

// SPEC.md App deployment contract 1: `Root directory` is the build context (default: repository
// root); `Dockerfile path` is relative to the root directory, not the repository root (default:
// the default filename). SPEC.md Errors, failed-deploy messages: nothing found to build at the
// resolved build-file path, listing the build files found.

const ok = (path: string): PathResult => ({ ok: true, path });

describe("normalizeRepoPath", () => {
  it.each<[string, PathResult]>([
    ["", ok("")],
    ["   ", ok("")],
    [".", ok("")],
    ["/", ok("")],
    ["./", ok("")],
    ["api", ok("api")],
    ["  api/  ", ok("api")],
    ["./api", ok("api")],
    ["/api", ok("api")],
    ["api//web", ok("api/web")],
    ["api/./web/", ok("api/web")],
    ["api/../web", ok("web")],
    ["api/..", ok("")],
    ["services/api/../../web", ok("web")],
    [".github", ok(".github")],
    ["my dir/x", ok("my dir/x")],
    ["..", { ok: false, message: 'Path ".." leads outside the repository.' }],
    ["../web", { ok: false, message: 'Path "../web" leads outside the repository.' }],
    ["api/../../web", { ok: false, message: 'Path "api/../../web" leads outside the repository.' }],
    ["api\\web", { ok: false, message: 'Path "api\\web" uses a backslash; use forward slashes (/).' }],
    ["C:/code/api", { ok: false, message: 'Path "C:/code/api" must be a path inside the repository, not a path on a computer.' }],
    ["~/api", { ok: false, message: 'Path "~/api" must be a path inside the repository, not a path on a computer.' }],
    ["api\u0000", { ok: false, message: "Path contains a control character." }],
  ])("%j", (input, expected) => {
    expect(normalizeRepoPath(input)).toEqual(expected);
  });

  it("names the setting in its messages", () => {
    expect(normalizeRepoPath("..", "Root directory")).toEqual({ ok: false, message: 'Root directory ".." leads outside the repository.' });
  });
});

describe("resolveBuildFile", () => {
  it.each<[string, string, string, BuildFileResult]>([
    ["defaults", "", "", { ok: true, path: "Dockerfile", inContext: "Dockerfile" }],
    ["root only: the default filename inside it", "api", "", { ok: true, path: "api/Dockerfile", inContext: "Dockerfile" }],
    ["path relative to the root, not the repository", "api", "docker/prod.Dockerfile", { ok: true, path: "api/docker/prod.Dockerfile", inContext: "docker/prod.Dockerfile" }],
    ["nested root", "services/api/", "./Dockerfile", { ok: true, path: "services/api/Dockerfile", inContext: "Dockerfile" }],
    ["leading slash reads from the root directory", "api", "/Containerfile", { ok: true, path: "api/Containerfile", inContext: "Containerfile" }],
    ["path with .. staying in the root", "api", "docker/../Dockerfile", { ok: true, path: "api/Dockerfile", inContext: "Dockerfile" }],
    ["root written as ./", "./", "Dockerfile.prod", { ok: true, path: "Dockerfile.prod", inContext: "Dockerfile.prod" }],
    ["build file outside the root", "api", "../Dockerfile", { ok: false, message: 'Dockerfile path "../Dockerfile" leads outside the root directory.' }],
    ["root outside the repository", "../other", "", { ok: false, message: 'Root directory "../other" leads outside the repository.' }],
    ["a folder, not a file", "", "docker/", { ok: false, message: 'Dockerfile path "docker/" names a folder; give the file, e.g. "docker/Dockerfile".' }],
    ["only dots", "api", ".", { ok: false, message: 'Dockerfile path "." does not name a file.' }],
    ["backslashes", "", "docker\\Dockerfile", { ok: false, message: 'Dockerfile path "docker\\Dockerfile" uses a backslash; use forward slashes (/).' }],
  ])("%s", (_name, root, dockerfile, expected) => {
    expect(resolveBuildFile(root, dockerfile)).toEqual(expected);
  });
});

describe("isBuildFileName (case-insensitive)", () => {
  it.each<[string, boolean]>([
    ["Dockerfile", true],
    ["Containerfile", true],
    ["web.Dockerfile", true],
    ["Dockerfile.prod", true],
    ["Dockerfile.dev.arm64", true],
    ["dockerfile", true],
    ["DOCKERFILE", true],
    ["api.dockerfile", true],
    ["containerfile", true],
    [".Dockerfile", false],
    ["Dockerfile.", false],
    [".dockerignore", false],
    ["Dockerfiles", false],
    ["MyDockerfile", false],
    ["docker-compose.yml", false],
    ["Containerfile.prod", false],
    ["", false],
  ])("%j -> %s", (name, expected) => {
    expect(isBuildFileName(name)).toBe(expected);
  });
});

describe("missingBuildFileMessage", () => {
  it.each<[string, string, string[], string]>([
    ["files found", "api/Dockerfile", ["docker/Dockerfile", "web.Dockerfile"], 'Nothing to build: no file at "api/Dockerfile". Build files in the repository: docker/Dockerfile, web.Dockerfile.'],
    ["one found", "Dockerfile", ["dockerfile"], 'Nothing to build: no file at "Dockerfile". Build files in the repository: dockerfile.'],
    ["none found", "Dockerfile", [], 'Nothing to build: no file at "Dockerfile". No build files were found in the repository.'],
  ])("%s", (_name, path, found, expected) => {
    expect(missingBuildFileMessage(path, found)).toBe(expected);
  });

  it("names the first 20 and counts the rest", () => {
    const found = Array.from({ length: 23 }, (_, i) => `s${i}/Dockerfile`);
    const message = missingBuildFileMessage("Dockerfile", found);
    expect(message).toContain("s19/Dockerfile and 3 more.");
    expect(message).not.toContain("s20/");
  });
});
