/**
 * Private repositories and deploy on push end to end: a real `wrangler dev`, the machine's
 * dockerd and the dev forge. The forge sends Gitea-style push webhooks for new commits to the
 * hooks registered on a repository, and serves a private repository only with its token.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFiles, createRepository } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, curlApp, deployAndWait, httpdApp, repository, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

let stack: AppsStack;
let session: ConsoleSession;

beforeAll(async () => {
  stack = await startAppsStack();
  session = await signedUp(stack.worker.url);
});

afterAll(async () => {
  await stack?.stop();
});

type Deploy = { id: string; status: string; kind: string; failure?: { kind: string; message: string } };
const deploys = async (appId: string) => (await session.call<{ deploys: Deploy[] }>("GET", `/console/api/apps/${appId}/deploys`)).deploys;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Adds a push webhook to a repository on the dev forge, through its Gitea-shaped API. */
async function addHook(name: string, url: string, secret: string): Promise<void> {
  const res = await fetch(`${stack.forgeUrl}/api/v1/repos/acme/${name}/hooks`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type: "gitea", config: { url, secret, content_type: "json" }, events: ["push"] }) });
  expect(res.status).toBe(201);
}

async function hookStatuses(name: string): Promise<(number | null)[]> {
  return ((await (await fetch(`${stack.forgeUrl}/api/v1/repos/acme/${name}/hooks`)).json()) as { last_status: number | null }[]).map((h) => h.last_status);
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
    await sleep(500);
  }
}

describe("deploy on push", () => {
  it("a push webhook with a good signature deploys the new commit; a bad one does nothing", async () => {
    const name = `pushed-${Date.now() % 100000}`;
    const repo = await repository(stack, name, httpdApp("<p>push v1</p>"));
    const app = await session.call<AppJson>("POST", "/console/api/apps", { name: "Pushed", repository: repo, subdomain: name });
    const live = await deployAndWait(session, app.id);
    expect(live.latest_deploy).toMatchObject({ status: "live" });
    const { url, secret } = await session.call<{ url: string; secret: string }>("POST", `/console/api/apps/${app.id}/webhook/rotate`);
    expect(url).toBe(`${stack.worker.url}/webhooks/apps/${app.id}`);

    // A hook with the wrong secret: its delivery is refused and nothing deploys.
    await addHook(name, url, "not-the-secret");
    await commitFiles(stack.forgeRoot, "acme", name, { "www/index.html": "<p>push v2</p>" }, { message: "v2" });
    expect(await until("the refused delivery", async () => ((await hookStatuses(name))[0] === 401 ? 401 : undefined), 30_000)).toBe(401);
    await sleep(1500);
    expect(await deploys(app.id)).toHaveLength(1);
    expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "<p>push v1</p>" });

    // The same with curl, a forged GitHub signature: 401.
    const { stdout } = await promisify(execFile)("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", url, "-H", "Content-Type: application/json", "-H", "X-GitHub-Event: push",
      "-H", `X-Hub-Signature-256: sha256=${"0".repeat(64)}`, "--data", '{"ref":"refs/heads/main"}']);
    expect(stdout).toBe("401");
    expect(await deploys(app.id)).toHaveLength(1);

    // The right secret: the next commit is deployed, by a deploy of kind push.
    await addHook(name, url, secret);
    await commitFiles(stack.forgeRoot, "acme", name, { "www/index.html": "<p>push v3</p>" }, { message: "v3" });
    const served = await until("the pushed commit served", async () => {
      const reply = await curlApp(stack, app.subdomain);
      return reply.body === "<p>push v3</p>" ? reply : undefined;
    });
    expect(served.status).toBe(200);
    expect(await hookStatuses(name)).toEqual([401, 202]);
    const history = await deploys(app.id);
    expect(history.map((d) => [d.kind, d.status])).toEqual([["push", "live"], ["deploy", "superseded"]]);

    // The apps guide's curl call (docs/apps.md), exactly as written, signed as GitHub signs: it deploys too.
    const readme = readFileSync(join(__dirname, "../../docs/apps.md"), "utf8");
    const snippet = /```sh\n(body='\{"ref"[\s\S]*?)```/.exec(readme)![1]!;
    const { stdout: reply } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", snippet], { env: { ...process.env, WEBHOOK_URL: url, WEBHOOK_SECRET: secret } });
    expect(JSON.parse(reply)).toMatchObject({ success: true, deployed: true, deploy: { kind: "push" } });
    await until("the README's push deployed", async () => ((await deploys(app.id)).map((d) => d.status).join() === "live,superseded,superseded" ? true : undefined));
  });

  it("a push before the first Deploy is refused: nothing is built or charged", async () => {
    const name = `early-${Date.now() % 100000}`;
    const repo = await repository(stack, name, httpdApp("<p>early</p>"));
    const app = await session.call<AppJson & { billing: { charged: boolean } }>("POST", "/console/api/apps", { name: "Early", repository: repo, subdomain: name });
    const { url, secret } = await session.call<{ url: string; secret: string }>("POST", `/console/api/apps/${app.id}/webhook/rotate`);
    await addHook(name, url, secret);
    await commitFiles(stack.forgeRoot, "acme", name, { "www/index.html": "<p>early v2</p>" });
    expect(await until("the refused push", async () => ((await hookStatuses(name))[0] === 409 ? 409 : undefined), 30_000)).toBe(409);
    expect(await deploys(app.id)).toHaveLength(0);
    expect(await session.call("GET", `/console/api/apps/${app.id}`)).toMatchObject({ status: "not_deployed", billing: { charged: false } });
  });
});

describe("private repositories", () => {
  it("a private repository on the forge deploys with its token and fails without it, saying why", async () => {
    const name = `private-${Date.now() % 100000}`;
    const repo = await createRepository(stack.forgeRoot, "acme", name, httpdApp("<p>private</p>"), { modes: { busybox: 0o755 }, forgeUrl: stack.forgeUrl, token: "dev-forge-token-1" });
    const app = await session.call<AppJson & { source_token_set: boolean }>("POST", "/console/api/apps", { name: "Private", repository: repo, subdomain: name });
    const failed = await deployAndWait(session, app.id);
    expect(failed.latest_deploy?.status).toBe("failed");
    expect(failed.latest_deploy?.failure?.message).toBe(
      `The repository ${repo} has no branch main, or it is not public. Check the repository address and the deploy branch; for a private repository, save an access token in the app's settings.`,
    );
    const saved = await session.call<{ source_token_set: boolean }>("PATCH", `/console/api/apps/${app.id}`, { source_token: "dev-forge-token-1" });
    expect(saved.source_token_set).toBe(true);
    const live = await deployAndWait(session, app.id);
    expect(live.latest_deploy).toMatchObject({ status: "live" });
    expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "<p>private</p>" });
  });
});
