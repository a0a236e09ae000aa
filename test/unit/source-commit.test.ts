import { describe, expect, it } from "vitest";
import { COMMIT_MESSAGE_MAX, type Commit, cleanMessage, commitApiUrl, commitFromApiReply, commitFromArchive, commitFromTopFolder, pickCommit } from "../../src/source/commit";

// Deploy history: "the commit SHA and message, read from the forge's archive (the top folder) or
// its API". GitHub's codeload names the folder `<repo>-<sha>`, GitLab `<repo>-<ref>-<sha>`;
// Gitea/Forgejo name it after the repository only, so their API gives the commit.

const SHA = "0123456789abcdef0123456789abcdef01234567";
const OTHER = "fedcba9876543210fedcba9876543210fedcba98";

describe("commitFromTopFolder", () => {
  it.each<[string, string | null, string | null]>([
    ["GitHub codeload: <repo>-<sha>", `web-${SHA}`, SHA],
    ["GitLab: <repo>-<ref>-<sha>", `web-main-${SHA}`, SHA],
    ["a SHA-256 repository", `web-${"a".repeat(64)}`, "a".repeat(64)],
    ["Gitea/Forgejo: the repository's name", "web", null],
    ["the dev forge: <repo>-<branch>", "web-main", null],
    ["uppercase hex is not a forge's", `web-${SHA.toUpperCase()}`, null],
    ["too short", `web-${SHA.slice(0, 39)}`, null],
    ["no dash before it", `web${SHA}`, null],
    ["no folder (empty archive)", null, null],
  ])("%s", (_name, folder, expected) => {
    expect(commitFromTopFolder(folder)).toBe(expected);
  });
});

describe("commitFromArchive", () => {
  it.each<[string, string | null, string | null, string | null]>([
    ["git archive's pax comment", SHA, "web-main", SHA],
    ["the pax comment wins over the folder", SHA, `web-${OTHER}`, SHA],
    ["a comment that is not a SHA: the folder's", "made by hand", `web-${OTHER}`, OTHER],
    ["neither", null, "web", null],
  ])("%s", (_name, pax, folder, expected) => {
    expect(commitFromArchive(pax, folder)).toBe(expected);
  });
});

describe("commitApiUrl", () => {
  it.each<[string, string, string, string]>([
    ["GitHub", "https://github.com/acme/web", "main", "https://api.github.com/repos/acme/web/commits/main"],
    ["GitHub, .git and a slash in the branch", "https://github.com/acme/web.git", "feature/x", "https://api.github.com/repos/acme/web/commits/feature%2Fx"],
    ["GitLab, a group path", "https://gitlab.com/acme/team/web", "main", "https://gitlab.com/api/v4/projects/acme%2Fteam%2Fweb/repository/commits/main"],
    ["self-hosted GitLab", "https://gitlab.example.com/acme/web", "dev", "https://gitlab.example.com/api/v4/projects/acme%2Fweb/repository/commits/dev"],
    ["Gitea/Forgejo", "https://codeberg.org/acme/web", "main", "https://codeberg.org/api/v1/repos/acme/web/branches/main"],
    ["the dev forge", "http://127.0.0.1:3900/acme/web", "main", "http://127.0.0.1:3900/api/v1/repos/acme/web/branches/main"],
  ])("%s", (_name, repository, branch, expected) => {
    expect(commitApiUrl(repository, branch)).toBe(expected);
  });
});

describe("commitFromApiReply", () => {
  it.each<[string, unknown, Commit | null]>([
    ["GitHub", { sha: SHA, commit: { message: "Fix the header\n\nLonger text" } }, { sha: SHA, message: "Fix the header\n\nLonger text" }],
    ["GitLab", { id: SHA, short_id: SHA.slice(0, 8), title: "Fix", message: "Fix\n" }, { sha: SHA, message: "Fix" }],
    ["Gitea/Forgejo", { name: "main", commit: { id: SHA, message: "Fix it\n" } }, { sha: SHA, message: "Fix it" }],
    ["uppercase SHA is normalised", { sha: SHA.toUpperCase(), commit: { message: "m" } }, { sha: SHA, message: "m" }],
    ["no message", { sha: SHA }, { sha: SHA, message: "" }],
    ["not a SHA", { sha: "main", commit: { message: "m" } }, null],
    ["an error reply", { message: "Not Found" }, null],
    ["not an object", "nope", null],
    ["null", null, null],
  ])("%s", (_name, body, expected) => {
    expect(commitFromApiReply(body)).toEqual(expected);
  });
});

describe("cleanMessage", () => {
  it.each<[string, string, string]>([
    ["keeps newlines and tabs", "a\n\tb", "a\n\tb"],
    ["CRLF to LF, trailing space trimmed", "a\r\nb  \n", "a\nb"],
    ["drops terminal escapes and NUL", "a\u001b[31mred\u0000", "a[31mred"],
    ["capped", "x".repeat(COMMIT_MESSAGE_MAX + 10), "x".repeat(COMMIT_MESSAGE_MAX)],
  ])("%s", (_name, input, expected) => {
    expect(cleanMessage(input)).toBe(expected);
  });
});

describe("pickCommit", () => {
  it.each<[string, string | null, Commit | null, Commit | null]>([
    ["the folder and the API agree: both", SHA, { sha: SHA, message: "m" }, { sha: SHA, message: "m" }],
    ["a push between the two: the folder's SHA, no message", SHA, { sha: OTHER, message: "newer" }, { sha: SHA, message: "" }],
    ["only the folder", SHA, null, { sha: SHA, message: "" }],
    ["only the API (Gitea/Forgejo)", null, { sha: OTHER, message: "m" }, { sha: OTHER, message: "m" }],
    ["neither", null, null, null],
  ])("%s", (_name, folder, api, expected) => {
    expect(pickCommit(folder, api)).toEqual(expected);
  });
});
