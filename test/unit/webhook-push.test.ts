import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PUSH_BEFORE_FIRST_DEPLOY, REMEMBERED_PUSHES, pushDecision, pushKey, pushRefusal, rememberPush } from "../../src/webhooks/push";
import type { Forge } from "../../src/webhooks/signature";

// Deploy on push: "A push to the deploy branch starts a deploy, exactly as pressing Deploy does
// ... a push never creates a first charge ... Other branches ... answer 2xx with nothing done."
// Event names and payload fields as the forges document them (GitHub `push`/`ping`, Gitea and
// Forgejo `push`, GitLab `Push Hook`; `ref`, `after`, GitHub's `deleted`).

const SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const ZERO = "0000000000000000000000000000000000000000";

describe("pushDecision", () => {
  it.each<[string, Forge, string, unknown, ReturnType<typeof pushDecision>]>([
    ["GitHub push to the deploy branch", "github", "push", { ref: "refs/heads/main", after: SHA }, { action: "deploy", commit: SHA }],
    ["Gitea push to the deploy branch", "gitea", "push", { ref: "refs/heads/main", after: SHA }, { action: "deploy", commit: SHA }],
    ["GitLab Push Hook to the deploy branch", "gitlab", "Push Hook", { ref: "refs/heads/main", after: SHA, checkout_sha: SHA }, { action: "deploy", commit: SHA }],
    ["a push with no usable sha still deploys the branch", "github", "push", { ref: "refs/heads/main", after: "HEAD" }, { action: "deploy", commit: null }],
    ["GitHub ping", "github", "ping", { zen: "Keep it logically awesome." }, { action: "ignore", reason: 'A "ping" event does not deploy; only pushes do.' }],
    ["GitLab's event name from GitHub is not a push", "github", "Push Hook", { ref: "refs/heads/main" }, { action: "ignore", reason: 'A "Push Hook" event does not deploy; only pushes do.' }],
    ["GitLab Tag Push Hook", "gitlab", "Tag Push Hook", { ref: "refs/tags/v1" }, { action: "ignore", reason: 'A "Tag Push Hook" event does not deploy; only pushes do.' }],
    ["no event header", "gitea", "", { ref: "refs/heads/main" }, { action: "ignore", reason: "A delivery with no event name does not deploy; only pushes do." }],
    ["another branch", "github", "push", { ref: "refs/heads/feature", after: SHA }, { action: "ignore", reason: "A push to refs/heads/feature does not deploy; the deploy branch is main." }],
    ["a branch whose name ends like the deploy branch", "github", "push", { ref: "refs/heads/x/main", after: SHA }, { action: "ignore", reason: "A push to refs/heads/x/main does not deploy; the deploy branch is main." }],
    ["a tag named like the branch", "gitea", "push", { ref: "refs/tags/main", after: SHA }, { action: "ignore", reason: "A push to refs/tags/main does not deploy; the deploy branch is main." }],
    ["no ref", "github", "push", { after: SHA }, { action: "ignore", reason: "A push to no ref does not deploy; the deploy branch is main." }],
    ["a payload that is not an object", "github", "push", "push", { action: "ignore", reason: "A push to no ref does not deploy; the deploy branch is main." }],
    ["GitHub branch deletion", "github", "push", { ref: "refs/heads/main", after: ZERO, deleted: true }, { action: "ignore", reason: "The push deleted the branch main; nothing to deploy." }],
    ["GitLab branch deletion (after is zeros)", "gitlab", "Push Hook", { ref: "refs/heads/main", after: ZERO }, { action: "ignore", reason: "The push deleted the branch main; nothing to deploy." }],
  ])("%s", (_name, forge, event, payload, expected) => {
    expect(pushDecision(forge, event, payload, "main")).toEqual(expected);
  });

  it("matches a deploy branch with slashes exactly", () => {
    expect(pushDecision("github", "push", { ref: "refs/heads/release/2.0", after: SHA }, "release/2.0")).toEqual({ action: "deploy", commit: SHA });
  });
});

describe("pushKey: a push is known by what its signature covers, never by its delivery id", () => {
  const BEFORE = "a".repeat(40);
  it.each<[string, unknown, string | null]>([
    ["ref, before and after", { ref: "refs/heads/main", before: BEFORE, after: SHA }, `refs/heads/main ${BEFORE} ${SHA}`],
    ["a new branch (no before)", { ref: "refs/heads/main", after: SHA }, `refs/heads/main - ${SHA}`],
    ["a before that is not a commit", { ref: "refs/heads/main", before: "HEAD~1", after: SHA }, `refs/heads/main - ${SHA}`],
    ["a push back to an earlier commit is another push", { ref: "refs/heads/main", before: SHA, after: BEFORE }, `refs/heads/main ${SHA} ${BEFORE}`],
    ["no usable after: the body's digest decides", { ref: "refs/heads/main", after: "HEAD" }, null],
    ["no ref", { after: SHA }, null],
    ["not an object", "push", null],
  ])("%s", (_name, payload, key) => {
    expect(pushKey(payload)).toBe(key);
  });
});

describe("pushRefusal (billing rule 1: a push never creates a first charge)", () => {
  it.each<[string, { firstDeployAt: number | null; billingCharged: boolean }, boolean]>([
    ["never deployed", { firstDeployAt: null, billingCharged: false }, true],
    ["Deploy pressed but never charged (no engine then)", { firstDeployAt: 1, billingCharged: false }, true],
    ["deployed and charged", { firstDeployAt: 1, billingCharged: true }, false],
  ])("%s", (_name, app, refused) => {
    expect(pushRefusal(app)).toEqual(refused ? { outcome: "refused", code: "INVALID_STATE", message: PUSH_BEFORE_FIRST_DEPLOY } : null);
  });
});

describe("rememberPush", () => {
  it("keeps the newest ids, each once", () => {
    expect(rememberPush(["a", "b"], "c")).toEqual(["a", "b", "c"]);
    expect(rememberPush(["a", "b"], "a")).toEqual(["b", "a"]);
    const many = Array.from({ length: REMEMBERED_PUSHES }, (_, i) => `d${i}`);
    const next = rememberPush(many, "new");
    expect(next).toHaveLength(REMEMBERED_PUSHES);
    expect(next[0]).toBe("d1");
    expect(next.at(-1)).toBe("new");
  });
});

describe("rememberPush over random delivery sequences (fast-check)", () => {
  it("holds no id twice, at most REMEMBERED_PUSHES, and always the newest distinct ids", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: REMEMBERED_PUSHES + 50 }).map(String), { maxLength: 600 }), (ids) => {
        let seen: string[] = [];
        for (const id of ids) {
          seen = rememberPush(seen, id);
          expect(new Set(seen).size).toBe(seen.length);
          expect(seen.length).toBeLessThanOrEqual(REMEMBERED_PUSHES);
          expect(seen.at(-1)).toBe(id);
        }
        // The newest distinct ids, newest last, are exactly what is remembered.
        const newest: string[] = [];
        for (const id of [...ids].reverse()) if (!newest.includes(id)) newest.push(id);
        expect(seen).toEqual(newest.slice(0, REMEMBERED_PUSHES).reverse());
      }),
      { numRuns: 100 },
    );
  });
});
