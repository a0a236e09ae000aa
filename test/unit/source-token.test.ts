import { describe, expect, it } from "vitest";
import { archiveUrl, forgeOf } from "../../src/source/forge";
import { sourceTokenProblem, tokenHeader } from "../../src/source/token";

// Private repositories: the token is "sent only to the forge's own host", in the header each forge
// documents (GitHub REST: `Authorization: Bearer`; GitLab API: `PRIVATE-TOKEN`; Gitea/Forgejo API:
// `Authorization: token`), and the archive is read through the forge's API.

describe("archiveUrl with a token (the forge's API)", () => {
  it.each<[string, string, string]>([
    ["https://github.com/acme/shop", "main", "https://api.github.com/repos/acme/shop/tarball/refs/heads/main"],
    ["https://github.com/acme/shop.git", "feature/x", "https://api.github.com/repos/acme/shop/tarball/refs/heads/feature/x"],
    ["https://gitlab.com/acme/team/shop", "main", "https://gitlab.com/api/v4/projects/acme%2Fteam%2Fshop/repository/archive.tar.gz?sha=main"],
    ["https://gitlab.example.com/acme/shop", "feature/x", "https://gitlab.example.com/api/v4/projects/acme%2Fshop/repository/archive.tar.gz?sha=feature%2Fx"],
    ["https://git.example.net/acme/shop", "main", "https://git.example.net/api/v1/repos/acme/shop/archive/main.tar.gz"],
    ["https://git.example.net:3000/forge/acme/shop", "main", "https://git.example.net:3000/forge/api/v1/repos/acme/shop/archive/main.tar.gz"],
    ["http://127.0.0.1:3900/acme/shop", "main", "http://127.0.0.1:3900/api/v1/repos/acme/shop/archive/main.tar.gz"],
  ])("%s %s", (repository, branch, expected) => {
    expect(archiveUrl(repository, branch, { withToken: true })).toBe(expected);
  });

  it("without a token the public archive URL is unchanged", () => {
    expect(archiveUrl("https://github.com/acme/shop", "main")).toBe("https://codeload.github.com/acme/shop/tar.gz/refs/heads/main");
  });

  it.each([
    ["https://github.com/a/b", "github"],
    ["https://gitlab.com/a/b", "gitlab"],
    ["https://gitlab.acme.io/a/b", "gitlab"],
    ["https://codeberg.org/a/b", "gitea"],
  ])("forgeOf %s", (repository, forge) => {
    expect(forgeOf(repository)).toBe(forge);
  });
});

describe("tokenHeader (sent only to the forge's own origin)", () => {
  const T = "tok_123";
  it.each<[string, string, string, string | null, [string, string] | null]>([
    ["GitHub API", "https://github.com/a/b", "https://api.github.com/repos/a/b/tarball/refs/heads/main", T, ["Authorization", `Bearer ${T}`]],
    ["GitHub's redirect to codeload gets nothing", "https://github.com/a/b", "https://codeload.github.com/a/b/legacy.tar.gz/refs/heads/main?token=x", T, null],
    ["GitLab API", "https://gitlab.com/a/b", "https://gitlab.com/api/v4/projects/a%2Fb/repository/archive.tar.gz?sha=main", T, ["PRIVATE-TOKEN", T]],
    ["Gitea API", "https://git.example.net/a/b", "https://git.example.net/api/v1/repos/a/b/archive/main.tar.gz", T, ["Authorization", `token ${T}`]],
    ["a redirect to another host", "https://git.example.net/a/b", "https://cdn.example.net/archive.tar.gz", T, null],
    ["a redirect to the same host on another port", "https://git.example.net/a/b", "https://git.example.net:8443/x", T, null],
    ["a downgrade to http on the same host", "https://git.example.net/a/b", "http://git.example.net/x", T, null],
    ["a redirect to a look-alike host", "https://git.example.net/a/b", "https://git.example.net.evil.test/x", T, null],
    ["no token", "https://git.example.net/a/b", "https://git.example.net/api/v1/repos/a/b/archive/main.tar.gz", null, null],
  ])("%s", (_name, repository, url, token, expected) => {
    const origin = new URL(archiveUrl(repository, "main", { withToken: true })).origin;
    expect(tokenHeader(repository, origin, url, token)).toEqual(expected);
  });
});

describe("sourceTokenProblem", () => {
  it.each<[string, string | null]>([
    ["github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", null],
    ["glpat-xxxxxxxxxxxxxxxxxxxx", null],
    ["", "Enter the access token, or send null to remove it."],
    ["with space", "An access token is printable characters with no spaces."],
    ["line\nbreak", "An access token is printable characters with no spaces."],
    ["tökén", "An access token is printable characters with no spaces."],
    ["x".repeat(1001), "The access token is longer than 1000 characters."],
  ])("%j", (token, expected) => {
    expect(sourceTokenProblem(token)).toBe(expected);
  });
});
