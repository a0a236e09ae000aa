import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { COMMIT_API_TIMEOUT_MS, fetchCommit } from "../../src/source/commit";

// The forge's API as a malicious or broken forge would answer it: reading the commit never fails
// or stalls a deploy past COMMIT_API_TIMEOUT_MS, follows no redirect and reads no huge reply.
// The forge is the stand-in, faked at its HTTP boundary.

const SHA = "0123456789abcdef0123456789abcdef01234567";
let n = 0;
const repo = () => `commit-${Date.now() % 100000}-${++n}`;
const policy = { allowLocal: true };
const apiPath = (name: string) => `${env.FORGE_URL}/api/v1/repos/acme/${name}/branches/main`;
const put = (name: string, body: BodyInit, headers: Record<string, string> = {}) => fetch(apiPath(name), { method: "PUT", body, headers });

describe("fetchCommit", () => {
  it("reads Gitea's branch reply", async () => {
    const name = repo();
    await put(name, JSON.stringify({ name: "main", commit: { id: SHA, message: "Fix\n" } }));
    expect(await fetchCommit(`${env.FORGE_URL}/acme/${name}`, "main", { policy })).toEqual({ sha: SHA, message: "Fix" });
  });

  it.each<[string, (name: string) => Promise<unknown>]>([
    ["no such repository (404)", async () => undefined],
    ["a reply that is not JSON", (name) => put(name, "<html>sign in</html>")],
    ["a reply with no SHA", (name) => put(name, JSON.stringify({ commit: { id: "main", message: "x" } }))],
    ["a reply larger than 256 KiB", (name) => put(name, JSON.stringify({ commit: { id: SHA, message: "x".repeat(300 * 1024) } }))],
    ["a redirect (never followed)", (name) => put(name, "", { "X-Redirect-To": "http://169.254.169.254/latest/meta-data" })],
  ])("answers null for %s", async (_name, setup) => {
    const name = repo();
    await setup(name);
    expect(await fetchCommit(`${env.FORGE_URL}/acme/${name}`, "main", { policy })).toBeNull();
  });

  it("refuses a loopback forge when local sources are off, without asking it", async () => {
    const name = repo();
    await put(name, JSON.stringify({ commit: { id: SHA, message: "m" } }));
    expect(await fetchCommit(`${env.FORGE_URL}/acme/${name}`, "main", { policy: { allowLocal: false } })).toBeNull();
  });

  it("gives up on a forge that answers and then sends nothing", async () => {
    const name = repo();
    await put(name, "", { "X-Stall": "1" });
    const started = Date.now();
    expect(await fetchCommit(`${env.FORGE_URL}/acme/${name}`, "main", { policy })).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(COMMIT_API_TIMEOUT_MS - 100);
  }, 20_000);
});
