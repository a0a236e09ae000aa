import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Delivery, readDelivery, signBody, verifyDelivery } from "../../src/webhooks/signature";

// Deploy on push verifies each forge's documented signature, in constant time:
// GitHub "Validating webhook deliveries" (X-Hub-Signature-256: sha256=<HMAC-SHA256 hex>),
// Gitea/Forgejo webhooks (X-Gitea-Signature / X-Forgejo-Signature: <HMAC-SHA256 hex>),
// GitLab webhooks (X-Gitlab-Token: the secret token as entered).

const enc = (text: string) => new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;
const headers = (h: Record<string, string>) => (name: string) => new Headers(h).get(name);

describe("readDelivery", () => {
  it.each<[string, Record<string, string>, Delivery | null]>([
    [
      "GitHub",
      { "X-Hub-Signature-256": "sha256=abc", "X-GitHub-Event": "push", "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958" },
      { forge: "github", signature: "abc", event: "push", id: "72d3162e-cc78-11e3-81ab-4c9367dc0958" },
    ],
    ["GitHub without the sha256= prefix is no signature", { "X-Hub-Signature-256": "abc", "X-GitHub-Event": "push" }, { forge: "github", signature: "", event: "push", id: null }],
    [
      "Gitea (which also sends GitHub's headers) is read as Gitea",
      { "X-Gitea-Signature": "def", "X-Gitea-Event": "push", "X-Gitea-Delivery": "d1", "X-Hub-Signature-256": "sha256=def", "X-GitHub-Event": "push" },
      { forge: "gitea", signature: "def", event: "push", id: "d1" },
    ],
    ["Forgejo", { "X-Forgejo-Signature": "f0", "X-Forgejo-Event": "push", "X-Forgejo-Delivery": "d2" }, { forge: "gitea", signature: "f0", event: "push", id: "d2" }],
    [
      "GitLab, the idempotency key first (kept across retries)",
      { "X-Gitlab-Token": "s3cret", "X-Gitlab-Event": "Push Hook", "Idempotency-Key": "k1", "X-Gitlab-Event-UUID": "u1" },
      { forge: "gitlab", signature: "s3cret", event: "Push Hook", id: "k1" },
    ],
    ["GitLab without an idempotency key", { "X-Gitlab-Token": "s3cret", "X-Gitlab-Event": "Push Hook", "X-Gitlab-Event-UUID": "u1" }, { forge: "gitlab", signature: "s3cret", event: "Push Hook", id: "u1" }],
    ["no signature header at all", { "X-GitHub-Event": "push", "X-Hub-Signature": "sha1=abc" }, null],
    ["empty signature headers count as absent", { "X-Gitea-Signature": "", "X-Gitlab-Token": "" }, null],
  ])("%s", (_name, h, expected) => {
    expect(readDelivery(headers(h))).toEqual(expected);
  });
});

describe("verifyDelivery", () => {
  // GitHub's documented test values.
  const githubBody = enc("Hello, World!");
  const githubSecret = "It's a Secret to Everybody";
  const githubSignature = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

  it.each<[string, Delivery, Uint8Array<ArrayBuffer>, string, boolean]>([
    ["GitHub's documented example", { forge: "github", signature: githubSignature, event: "push", id: null }, githubBody, githubSecret, true],
    ["the same in upper-case hex", { forge: "github", signature: githubSignature.toUpperCase(), event: "push", id: null }, githubBody, githubSecret, true],
    ["Gitea signs the same way, without a prefix", { forge: "gitea", signature: githubSignature, event: "push", id: null }, githubBody, githubSecret, true],
    ["a changed body", { forge: "github", signature: githubSignature, event: "push", id: null }, enc("Hello, World?"), githubSecret, false],
    ["another secret", { forge: "github", signature: githubSignature, event: "push", id: null }, githubBody, "another secret", false],
    ["a truncated signature", { forge: "github", signature: githubSignature.slice(0, 63), event: "push", id: null }, githubBody, githubSecret, false],
    ["a signature that is not hex", { forge: "gitea", signature: "z".repeat(64), event: "push", id: null }, githubBody, githubSecret, false],
    ["an empty signature", { forge: "github", signature: "", event: "push", id: null }, githubBody, githubSecret, false],
    ["an app with no secret never verifies", { forge: "github", signature: githubSignature, event: "push", id: null }, githubBody, "", false],
    ["GitLab: the token itself", { forge: "gitlab", signature: "s3cret-token", event: "Push Hook", id: null }, enc("{}"), "s3cret-token", true],
    ["GitLab: another token", { forge: "gitlab", signature: "s3cret-tokeN", event: "Push Hook", id: null }, enc("{}"), "s3cret-token", false],
    ["GitLab: a prefix of the token", { forge: "gitlab", signature: "s3cret", event: "Push Hook", id: null }, enc("{}"), "s3cret-token", false],
    ["GitLab: an HMAC is not the token", { forge: "gitlab", signature: githubSignature, event: "Push Hook", id: null }, githubBody, githubSecret, false],
  ])("%s", async (_name, delivery, body, secret, expected) => {
    expect(await verifyDelivery(delivery, body, secret)).toBe(expected);
  });

  it("signBody gives what a forge sends", async () => {
    expect(await signBody(githubBody, githubSecret)).toBe(githubSignature);
  });
});

describe("verifyDelivery over random bodies and secrets (fast-check)", () => {
  it("accepts what signBody signs, and refuses any one changed byte of the body or signature", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 512 }), fc.string({ minLength: 1, maxLength: 64 }), fc.nat(), async (bytes, secret, at) => {
        const body = new Uint8Array(bytes) as Uint8Array<ArrayBuffer>;
        const signature = await signBody(body, secret);
        expect(await verifyDelivery({ forge: "github", signature, event: "push", id: null }, body, secret)).toBe(true);
        const changed = new Uint8Array(body);
        changed[at % changed.length]! ^= 0x01;
        expect(await verifyDelivery({ forge: "github", signature, event: "push", id: null }, changed, secret)).toBe(false);
        const i = at % signature.length;
        const flipped = signature.slice(0, i) + (signature[i] === "0" ? "1" : "0") + signature.slice(i + 1);
        expect(await verifyDelivery({ forge: "gitea", signature: flipped, event: "push", id: null }, body, secret)).toBe(false);
      }),
      { numRuns: 100 },
    );
  });
});
