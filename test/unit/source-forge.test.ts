import { describe, expect, it } from "vitest";
import { archiveUrl, branchProblem, normalizeRepository, repositoryProblem } from "../../src/source/forge";

// An app deploys from its repository's deploy branch (SPEC.md App controls, Deploy: "builds from
// the deploy branch"; App deployment contract 1: the repository's container build file).

const EXAMPLE = "https://github.com/owner/repo";

describe("repositoryProblem", () => {
  it.each<[string, string | null]>([
    ["https://github.com/acme/shop", null],
    ["https://github.com/acme/shop.git", null],
    ["https://github.com/acme/shop/", null],
    ["  https://github.com/acme/shop  ", null],
    ["https://gitlab.com/acme/team/shop", null],
    ["https://git.example.net:3000/acme/shop", null],
    ["http://127.0.0.1:3900/acme/shop", null],
    ["http://127.5.6.7/acme/shop", null],
    ["http://localhost:3900/acme/shop", null],
    ["http://[::1]:3900/acme/shop", null],
    ["http://github.com/acme/shop", "Use the repository's https:// address; http is accepted only for a forge on this machine."],
    ["http://10.0.0.5/acme/shop", "Use the repository's https:// address; http is accepted only for a forge on this machine."],
    ["http://localhost.example.com/acme/shop", "Use the repository's https:// address; http is accepted only for a forge on this machine."],
    ["git@github.com:acme/shop.git", `Enter the repository's web address, like ${EXAMPLE}.`],
    ["github.com/acme/shop", `Enter the repository's web address, like ${EXAMPLE}.`],
    ["", `Enter the repository's web address, like ${EXAMPLE}.`],
    ["ssh://git@github.com/acme/shop", `Use the repository's https:// address, like ${EXAMPLE}.`],
    ["ftp://example.com/acme/shop", `Use the repository's https:// address, like ${EXAMPLE}.`],
    ["https://token@github.com/acme/shop", "Remove the user name or password from the repository address."],
    ["https://user:pass@gitlab.com/acme/shop", "Remove the user name or password from the repository address."],
    ["https://github.com/acme/shop?tab=readme", "Remove the ? or # part from the repository address."],
    ["https://github.com/acme/shop#readme", "Remove the ? or # part from the repository address."],
    ["https://github.com/acme", `The address must name the owner and the repository, like ${EXAMPLE}.`],
    ["https://github.com/", `The address must name the owner and the repository, like ${EXAMPLE}.`],
    ["https://github.com/acme/.git", `The address must name the owner and the repository, like ${EXAMPLE}.`],
    ["https://github.com/acme/shop/tree/main", `A GitHub address names just the owner and the repository, like ${EXAMPLE}.`],
  ])("%j", (url, expected) => {
    expect(repositoryProblem(url)).toBe(expected);
  });
});

describe("normalizeRepository", () => {
  it.each<[string, string]>([
    ["https://github.com/acme/shop", "https://github.com/acme/shop"],
    ["https://github.com/acme/shop.git", "https://github.com/acme/shop"],
    ["https://github.com/acme/shop.git/", "https://github.com/acme/shop"],
    ["https://github.com/acme/shop//", "https://github.com/acme/shop"],
    ["HTTPS://GitHub.COM/acme/Shop", "https://github.com/acme/Shop"],
    ["http://127.0.0.1:3900/acme/shop/", "http://127.0.0.1:3900/acme/shop"],
    ["https://gitlab.example.org/group/sub/shop.git", "https://gitlab.example.org/group/sub/shop"],
  ])("%s -> %s", (url, expected) => {
    expect(normalizeRepository(url)).toBe(expected);
  });
});

describe("archiveUrl", () => {
  it.each<[string, string, string, string]>([
    ["GitHub", "https://github.com/acme/shop.git", "main", "https://codeload.github.com/acme/shop/tar.gz/refs/heads/main"],
    ["GitHub, branch with a slash", "https://github.com/acme/shop", "feature/new-ui", "https://codeload.github.com/acme/shop/tar.gz/refs/heads/feature/new-ui"],
    ["GitHub, branch needing encoding", "https://github.com/acme/shop", "fix#12/ä", "https://codeload.github.com/acme/shop/tar.gz/refs/heads/fix%2312/%C3%A4"],
    ["gitlab.com", "https://gitlab.com/acme/shop", "main", "https://gitlab.com/acme/shop/-/archive/main/shop-main.tar.gz"],
    ["gitlab.com subgroup", "https://gitlab.com/acme/team/shop.git", "main", "https://gitlab.com/acme/team/shop/-/archive/main/shop-main.tar.gz"],
    ["self-hosted GitLab", "https://gitlab.example.org/acme/shop", "release/2.0", "https://gitlab.example.org/acme/shop/-/archive/release/2.0/shop-release-2.0.tar.gz"],
    ["Gitea or Forgejo", "https://codeberg.org/acme/shop", "main", "https://codeberg.org/acme/shop/archive/main.tar.gz"],
    ["local dev forge", "http://127.0.0.1:3900/acme/shop/", "feature/x", "http://127.0.0.1:3900/acme/shop/archive/feature/x.tar.gz"],
    ["a host merely containing gitlab is not GitLab", "https://mygitlab.example.org/acme/shop", "main", "https://mygitlab.example.org/acme/shop/archive/main.tar.gz"],
  ])("%s", (_name, repository, branch, expected) => {
    expect(archiveUrl(repository, branch)).toBe(expected);
  });
});

describe("branchProblem", () => {
  it.each<[string, string | null]>([
    ["main", null],
    ["feature/new-ui", null],
    ["release-2.0", null],
    ["v1.2.3", null],
    ["user@host", null],
    ["", "Enter a branch name."],
    ["my branch", "A branch name cannot contain spaces or control characters."],
    ["main\t", "A branch name cannot contain spaces or control characters."],
    ["a~1", "A branch name cannot contain any of ~ ^ : ? * [ \\."],
    ["a^", "A branch name cannot contain any of ~ ^ : ? * [ \\."],
    ["a:b", "A branch name cannot contain any of ~ ^ : ? * [ \\."],
    ["what?", "A branch name cannot contain any of ~ ^ : ? * [ \\."],
    ["wip*", "A branch name cannot contain any of ~ ^ : ? * [ \\."],
    ["a[1]", "A branch name cannot contain any of ~ ^ : ? * [ \\."],
    ["a\\b", "A branch name cannot contain any of ~ ^ : ? * [ \\."],
    ["-main", "A branch name cannot start with a hyphen."],
    ["a..b", "A branch name cannot contain two dots in a row."],
    ["main@{1}", "A branch name cannot be @ or contain @{."],
    ["@", "A branch name cannot be @ or contain @{."],
    ["feature/", "A branch name cannot end with a slash or a dot."],
    ["main.", "A branch name cannot end with a slash or a dot."],
    ["main.lock", "A branch name cannot end with .lock."],
    ["/main", "Each part of a branch name between slashes must be non-empty and not start with a dot."],
    ["a//b", "Each part of a branch name between slashes must be non-empty and not start with a dot."],
    ["feature/.hidden", "Each part of a branch name between slashes must be non-empty and not start with a dot."],
    [".main", "Each part of a branch name between slashes must be non-empty and not start with a dot."],
  ])("%j", (name, expected) => {
    expect(branchProblem(name)).toBe(expected);
  });
});
