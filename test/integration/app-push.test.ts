import { env, exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SOURCE_TOKEN_UNREADABLE } from "../../src/source/token";
import { REPLAYED_PUSH, WEBHOOK_RATE } from "../../src/webhooks/route";
import { PUSH_BEFORE_FIRST_DEPLOY } from "../../src/webhooks/push";
import { signBody } from "../../src/webhooks/signature";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { type ConsoleClient, ORIGIN, signedUp } from "./helpers";

// Private repositories and deploy on push: `source_token` in PATCH (write-only, sealed, sent only
// to the forge's own host), `source_token_set` and `webhook: {url}` in the app JSON,
// `POST .../webhook/rotate` -> `{url, secret}`, and the public webhook endpoint: signatures of
// GitHub, Gitea and GitLab, the branch and event rule, billing rule 1, replays, body and rate limits.

type App = AppJson & { source_token_set: boolean; webhook: { url: string; secret_set: boolean }; billing: { charged: boolean } };
interface DeployJson {
  id: string;
  kind: string;
  status: string;
  failure?: { kind: string; message: string };
}

let n = 0;
const unique = (name: string) => `${name}-${Date.now() % 100000}-${++n}`;
const SHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e";

async function newApp(client: ConsoleClient, repository?: string): Promise<App> {
  const repo = repository ?? (await publishRepository(unique("push"), httpdFiles("<p>push</p>")));
  return client.json<App>("POST", "/console/api/apps", { name: "Pushed", repository: repo, subdomain: unique("push") });
}

async function deployed(client: ConsoleClient, app: App): Promise<App> {
  expect((await client.call("POST", `/console/api/apps/${app.id}/deploy`)).status).toBe(202);
  await waitForDeploy(client, app.id);
  return client.json<App>("GET", `/console/api/apps/${app.id}`);
}

const deploys = async (client: ConsoleClient, appId: string) => (await client.json<{ deploys: DeployJson[] }>("GET", `/console/api/apps/${appId}/deploys`)).deploys;

type Forge = "github" | "gitea" | "gitlab";

/** A delivery as each forge sends it; `secret` signs it (GitLab: sent as the token). */
async function deliver(url: string, secret: string, options: { forge?: Forge; event?: string; payload?: unknown; delivery?: string; body?: string; signature?: string } = {}): Promise<Response> {
  const forge = options.forge ?? "github";
  const body = options.body ?? JSON.stringify(options.payload ?? { ref: "refs/heads/main", before: "0".repeat(40), after: SHA });
  const signature = options.signature ?? (forge === "gitlab" ? secret : await signBody(new TextEncoder().encode(body) as Uint8Array<ArrayBuffer>, secret));
  const delivery = options.delivery ?? crypto.randomUUID();
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (forge === "github") Object.assign(headers, { "X-GitHub-Event": options.event ?? "push", "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": `sha256=${signature}` });
  if (forge === "gitea") Object.assign(headers, { "X-Gitea-Event": options.event ?? "push", "X-Gitea-Delivery": delivery, "X-Gitea-Signature": signature });
  if (forge === "gitlab") Object.assign(headers, { "X-Gitlab-Event": options.event ?? "Push Hook", "Idempotency-Key": delivery, "X-Gitlab-Token": signature });
  return workerExports.default.fetch(new Request(url, { method: "POST", headers, body }));
}

async function rotate(client: ConsoleClient, appId: string): Promise<{ url: string; secret: string }> {
  return client.json("POST", `/console/api/apps/${appId}/webhook/rotate`);
}

describe("source_token (private repositories)", { timeout: 60_000 }, () => {
  it("is write-only: PATCH saves it sealed, the JSON shows only source_token_set, null clears it", async () => {
    const client = await signedUpClient();
    const app = await newApp(client);
    expect(app.source_token_set).toBe(false);
    const saved = await client.json<App>("PATCH", `/console/api/apps/${app.id}`, { source_token: "ghp_secret-token-123" });
    expect(saved.source_token_set).toBe(true);
    expect(JSON.stringify(saved)).not.toContain("ghp_secret-token-123");
    const row = await env.DB.prepare("SELECT source_token FROM apps WHERE id = ?").bind(app.id).first<{ source_token: string }>();
    expect(row!.source_token).not.toContain("ghp_secret-token-123");
    expect(JSON.parse(row!.source_token)).toMatchObject({ kid: expect.any(String), iv: expect.any(String), ciphertext: expect.any(String) });
    const cleared = await client.json<App>("PATCH", `/console/api/apps/${app.id}`, { source_token: null });
    expect(cleared.source_token_set).toBe(false);
  });

  it("a token stays with its forge: moving the repository to another host removes it, unless a new one comes along", async () => {
    const client = await signedUpClient();
    const app = await newApp(client, "https://github.com/acme/shop");
    await client.json("PATCH", `/console/api/apps/${app.id}`, { source_token: "github-token" });
    // Same forge, another repository: kept.
    expect((await client.json<App>("PATCH", `/console/api/apps/${app.id}`, { repository: "https://github.com/acme/other" })).source_token_set).toBe(true);
    // Another host: removed, so it is never sent there.
    expect((await client.json<App>("PATCH", `/console/api/apps/${app.id}`, { repository: "https://gitlab.com/acme/shop" })).source_token_set).toBe(false);
    // Another host with its own token: that one is saved.
    const moved = await client.json<App>("PATCH", `/console/api/apps/${app.id}`, { repository: "https://codeberg.org/acme/shop", source_token: "codeberg-token" });
    expect(moved.source_token_set).toBe(true);
  });

  it.each([
    [{ source_token: "" }, "source_token: Enter the access token, or send null to remove it."],
    [{ source_token: "two words" }, "source_token: An access token is printable characters with no spaces."],
    [{ source_token: 42 }, "source_token: Give the access token as a string, or null to remove it."],
  ])("refuses %j naming the field", async (body, message) => {
    const client = await signedUpClient();
    const app = await newApp(client);
    const res = await client.call("PATCH", `/console/api/apps/${app.id}`, body);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: message });
  });

  it("another account cannot set a token on an app it does not own", async () => {
    const owner = await signedUpClient();
    const app = await newApp(owner);
    const stranger = await signedUp();
    expect((await stranger.call("PATCH", `/console/api/apps/${app.id}`, { source_token: "mine" })).status).toBe(404);
    expect((await owner.json<App>("GET", `/console/api/apps/${app.id}`)).source_token_set).toBe(false);
  });

  it("a private repository deploys with its token and fails without it, saying why", async () => {
    const client = await signedUpClient();
    const name = unique("private");
    const repository = await publishRepository(name, httpdFiles("<p>private</p>"), "main", { token: "forge-token-1" });
    const app = await newApp(client, repository);
    const failed = await deployed(client, app);
    expect(failed.latest_deploy?.status).toBe("failed");
    expect(failed.latest_deploy?.failure?.message).toBe(
      `The repository ${repository} has no branch main, or it is not public. Check the repository address and the deploy branch; for a private repository, save an access token in the app's settings.`,
    );
    await client.json("PATCH", `/console/api/apps/${app.id}`, { source_token: "wrong-token" });
    const refused = await deployed(client, app);
    expect(refused.latest_deploy?.failure?.message).toBe(`The forge of ${repository} refused the saved access token. Save a token that can read the repository (it may have expired or lack read access).`);
    await client.json("PATCH", `/console/api/apps/${app.id}`, { source_token: "forge-token-1" });
    const live = await deployed(client, app);
    expect(live.latest_deploy?.status).toBe("live");
    const log = await (await client.call("GET", `/console/api/apps/${app.id}/deploys/${live.latest_deploy!.id}/log`)).text();
    expect(log).not.toContain("forge-token-1");
  });

  it("a token sealed for another app does not open for this one: the deploy fails saying so", async () => {
    const client = await signedUpClient();
    const name = unique("moved-token");
    const repository = await publishRepository(name, httpdFiles("<p>private</p>"), "main", { token: "forge-token-2" });
    const victim = await newApp(client, repository);
    const thief = await newApp(client, repository);
    await client.json("PATCH", `/console/api/apps/${victim.id}`, { source_token: "forge-token-2" });
    // Copy the victim's sealed token onto the other app's record, as a write to D1 could.
    await env.DB.prepare("UPDATE apps SET source_token = (SELECT source_token FROM apps WHERE id = ?) WHERE id = ?").bind(victim.id, thief.id).run();
    const failed = await deployed(client, thief);
    expect(failed.latest_deploy?.failure).toEqual({ kind: "invalid_settings", message: SOURCE_TOKEN_UNREADABLE });
  });

  it("sends the token to the forge's own origin only, never to a redirect target elsewhere", async () => {
    const client = await signedUpClient();
    const name = unique("moved");
    const target = await publishRepository(unique("target"), httpdFiles("<p>moved</p>"));
    // The forge's API answers with a redirect to another origin (localhost, not 127.0.0.1), which serves the archive.
    const elsewhere = `${target.replace("127.0.0.1", "localhost")}/archive/main.tar.gz`;
    const apiPath = `/api/v1/repos/acme/${name}/archive/main.tar.gz`;
    expect((await fetch(`${env.FORGE_URL}${apiPath}`, { method: "PUT", headers: { "X-Redirect-To": elsewhere } })).status).toBe(201);
    const app = await newApp(client, `${env.FORGE_URL}/acme/${name}`);
    await client.json("PATCH", `/console/api/apps/${app.id}`, { source_token: "only-for-the-forge" });
    const live = await deployed(client, app);
    expect(live.latest_deploy?.status).toBe("live");
    const seen = async (path: string) => (await fetch(`${env.FORGE_URL}/_seen?path=${encodeURIComponent(path)}`)).json();
    expect(await seen(apiPath)).toEqual(["token only-for-the-forge"]);
    expect(await seen(new URL(elsewhere).pathname)).toEqual([null]);
  });
});

describe("webhook secret", { timeout: 60_000 }, () => {
  it("rotate answers {url, secret} once; the app JSON shows the url and secret_set, never the secret", async () => {
    const client = await signedUpClient();
    const app = await newApp(client);
    expect(app.webhook).toEqual({ url: `${ORIGIN}/webhooks/apps/${app.id}`, secret_set: false });
    const first = await rotate(client, app.id);
    expect(first.url).toBe(`${ORIGIN}/webhooks/apps/${app.id}`);
    expect(first.secret).toMatch(/^[0-9a-f]{64}$/);
    const shown = await client.json<App>("GET", `/console/api/apps/${app.id}`);
    expect(shown.webhook).toEqual({ url: first.url, secret_set: true });
    expect(JSON.stringify(shown)).not.toContain(first.secret);
    const row = await env.DB.prepare("SELECT webhook_secret FROM apps WHERE id = ?").bind(app.id).first<{ webhook_secret: string }>();
    expect(row!.webhook_secret).not.toContain(first.secret);
    const second = await rotate(client, app.id);
    expect(second.secret).not.toBe(first.secret);
  });

  it("another account's rotate answers 404 and changes nothing", async () => {
    const owner = await signedUpClient();
    const app = await newApp(owner);
    const stranger = await signedUp();
    expect((await stranger.call("POST", `/console/api/apps/${app.id}/webhook/rotate`)).status).toBe(404);
    expect((await owner.json<App>("GET", `/console/api/apps/${app.id}`)).webhook.secret_set).toBe(false);
  });

  it("rotate needs the session's CSRF origin like every console change", async () => {
    const client = await signedUpClient();
    const app = await newApp(client);
    const res = await client.call("POST", `/console/api/apps/${app.id}/webhook/rotate`, undefined, { Origin: "https://evil.example" });
    expect(res.status).toBe(403);
  });
});

describe("POST /webhooks/apps/{id}", { timeout: 60_000 }, () => {
  async function liveAppWithSecret() {
    const client = await signedUpClient();
    const app = await deployed(client, await newApp(client));
    expect(app.latest_deploy?.status).toBe("live");
    const { url, secret } = await rotate(client, app.id);
    return { client, app, url, secret };
  }

  it.each<Forge>(["github", "gitea", "gitlab"])("a %s push to the deploy branch deploys, recorded as kind push, with no charge", async (forge) => {
    const { client, app, url, secret } = await liveAppWithSecret();
    const wallet = await client.json<{ balance: number }>("GET", "/console/api/wallet");
    const res = await deliver(url, secret, { forge });
    expect(res.status).toBe(202);
    const body = await res.json<{ success: boolean; deployed: boolean; deploy: DeployJson }>();
    expect(body).toMatchObject({ success: true, deployed: true, deploy: { kind: "push" } });
    const after = await waitForDeploy(client, app.id);
    expect(after.latest_deploy).toMatchObject({ id: body.deploy.id, status: "live", kind: "push" });
    expect((await client.json<{ balance: number }>("GET", "/console/api/wallet")).balance).toBe(wallet.balance);
    expect((await deploys(client, app.id)).map((d) => d.kind)).toEqual(["push", "deploy"]);
  });

  it("a bad signature answers 401 and deploys nothing", async () => {
    const { client, app, url, secret } = await liveAppWithSecret();
    for (const forge of ["github", "gitea", "gitlab"] as const) {
      const res = await deliver(url, `${secret}x`, { forge });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ success: false, code: "UNAUTHORIZED", error: "The delivery's signature does not match the app's webhook secret." });
    }
    // A body changed after signing.
    const body = JSON.stringify({ ref: "refs/heads/main", after: SHA });
    const signature = await signBody(new TextEncoder().encode(body) as Uint8Array<ArrayBuffer>, secret);
    expect((await deliver(url, secret, { body: body.replace("main", "main "), signature })).status).toBe(401);
    // No signature header at all.
    const bare = await workerExports.default.fetch(new Request(url, { method: "POST", headers: { "X-GitHub-Event": "push" }, body }));
    expect(bare.status).toBe(401);
    expect(await deploys(client, app.id)).toHaveLength(1);
  });

  it("an old secret stops verifying once rotated", async () => {
    const { client, app, url, secret } = await liveAppWithSecret();
    await rotate(client, app.id);
    expect((await deliver(url, secret)).status).toBe(401);
    expect(await deploys(client, app.id)).toHaveLength(1);
  });

  it("an app with no secret yet refuses every delivery", async () => {
    const client = await signedUpClient();
    const app = await deployed(client, await newApp(client));
    expect((await deliver(`${ORIGIN}/webhooks/apps/${app.id}`, "a guess")).status).toBe(401);
    expect((await deliver(`${ORIGIN}/webhooks/apps/${app.id}`, "guess", { forge: "gitlab" })).status).toBe(401);
  });

  it("another app's secret does not deploy this app", async () => {
    const a = await liveAppWithSecret();
    const b = await liveAppWithSecret();
    expect((await deliver(a.url, b.secret)).status).toBe(401);
    expect(await deploys(a.client, a.app.id)).toHaveLength(1);
  });

  it.each([
    ["another branch", { payload: { ref: "refs/heads/feature", after: SHA } }, "A push to refs/heads/feature does not deploy; the deploy branch is main."],
    ["a tag", { payload: { ref: "refs/tags/v1.0", after: SHA } }, "A push to refs/tags/v1.0 does not deploy; the deploy branch is main."],
    ["a ping", { event: "ping", payload: { zen: "Design for failure." } }, 'A "ping" event does not deploy; only pushes do.'],
    ["an issue event", { event: "issues", payload: { action: "opened" } }, 'A "issues" event does not deploy; only pushes do.'],
    ["a branch deletion", { payload: { ref: "refs/heads/main", after: "0".repeat(40), deleted: true } }, "The push deleted the branch main; nothing to deploy."],
  ])("%s answers 200 with nothing done", async (_name, options, reason) => {
    const { client, app, url, secret } = await liveAppWithSecret();
    const res = await deliver(url, secret, options);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, deployed: false, reason });
    expect(await deploys(client, app.id)).toHaveLength(1);
  });

  it("billing rule 1: a push before the first Deploy is refused, with no deploy and no charge", async () => {
    const client = await signedUpClient();
    const app = await newApp(client);
    const { url, secret } = await rotate(client, app.id);
    const before = await client.json<{ balance: number }>("GET", "/console/api/wallet");
    const delivery = crypto.randomUUID();
    const res = await deliver(url, secret, { delivery });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ success: false, code: "INVALID_STATE", error: PUSH_BEFORE_FIRST_DEPLOY });
    expect(await deploys(client, app.id)).toHaveLength(0);
    const after = await client.json<App>("GET", `/console/api/apps/${app.id}`);
    expect(after).toMatchObject({ status: "not_deployed", billing: { charged: false } });
    expect((await client.json<{ balance: number }>("GET", "/console/api/wallet")).balance).toBe(before.balance);
    // Once Deploy is pressed, the same delivery sent again (a refused one is not remembered) deploys.
    const live = await deployed(client, app);
    expect(live.latest_deploy?.status).toBe("live");
    expect((await deliver(url, secret, { delivery })).status).toBe(202);
    expect((await waitForDeploy(client, app.id)).latest_deploy).toMatchObject({ status: "live", kind: "push" });
  });

  it("a replayed push does not deploy twice, under the same delivery id, a new one or none; a new commit does", async () => {
    const { client, app, url, secret } = await liveAppWithSecret();
    const delivery = crypto.randomUUID();
    expect((await deliver(url, secret, { delivery })).status).toBe(202);
    await waitForDeploy(client, app.id);
    for (const replay of [{ delivery }, { delivery: crypto.randomUUID() }, { delivery: "" }]) {
      const again = await deliver(url, secret, replay);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ success: true, deployed: false, reason: REPLAYED_PUSH });
    }
    expect(await deploys(client, app.id)).toHaveLength(2);
    // What was signed decides: the next commit under the old delivery id is a new push.
    expect((await deliver(url, secret, { delivery, payload: { ref: "refs/heads/main", before: SHA, after: "b".repeat(40) } })).status).toBe(202);
    await waitForDeploy(client, app.id);
    expect(await deploys(client, app.id)).toHaveLength(3);
  });

  it("a push while a deploy runs answers with the running deploy, as pressing Deploy does", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("slow"), httpdFiles("<p>slow</p>", { buildSeconds: 2 }));
    const app = await deployed(client, await newApp(client, repository));
    const { url, secret } = await rotate(client, app.id);
    const first = await (await deliver(url, secret)).json<{ deploy: DeployJson }>();
    const second = await deliver(url, secret, { payload: { ref: "refs/heads/main", before: SHA, after: "c".repeat(40) } });
    expect(second.status).toBe(202);
    expect(await second.json()).toMatchObject({ deployed: false, deploy: { id: first.deploy.id } });
    await waitForDeploy(client, app.id);
    expect(await deploys(client, app.id)).toHaveLength(2);
  });

  it("GitHub's form-encoded deliveries are read too", async () => {
    const { client, app, url, secret } = await liveAppWithSecret();
    const body = new URLSearchParams({ payload: JSON.stringify({ ref: "refs/heads/main", after: SHA }) }).toString();
    const signature = await signBody(new TextEncoder().encode(body) as Uint8Array<ArrayBuffer>, secret);
    const res = await workerExports.default.fetch(
      new Request(url, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", "X-GitHub-Event": "push", "X-Hub-Signature-256": `sha256=${signature}` }, body }),
    );
    expect(res.status).toBe(202);
    await waitForDeploy(client, app.id);
  });

  it("a signed body that is not JSON answers 400, not 500", async () => {
    const { url, secret } = await liveAppWithSecret();
    const res = await deliver(url, secret, { body: "not json" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: "body: The delivery is not a JSON push payload." });
  });

  it("a body past 1 MiB answers 413 before the signature is checked", async () => {
    const { url, secret } = await liveAppWithSecret();
    const res = await deliver(url, secret, { body: JSON.stringify({ ref: "refs/heads/main", pad: "x".repeat(1024 * 1024) }) });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ success: false, code: "PAYLOAD_TOO_LARGE" });
  });

  it("unsigned junk spends nothing; signed deliveries are rate limited per app: past the burst, 429 with Retry-After; another app is unaffected", async () => {
    const a = await liveAppWithSecret();
    const b = await liveAppWithSecret();
    for (let i = 0; i < WEBHOOK_RATE.burst * 2; i++) expect((await deliver(a.url, `${a.secret}-wrong`)).status).toBe(401);
    // The forge's own deliveries still have the whole burst (pushes to another branch: 200, nothing done).
    const other = { payload: { ref: "refs/heads/other", after: SHA } };
    for (let i = 0; i < WEBHOOK_RATE.burst; i++) expect((await deliver(a.url, a.secret, other)).status).toBe(200);
    // One more is refused (a slow machine may have earned back a call or two meanwhile).
    let limited = await deliver(a.url, a.secret, other);
    for (let i = 0; i < 3 && limited.status === 200; i++) limited = await deliver(a.url, a.secret, other);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await limited.json()).toMatchObject({ success: false, code: "RATE_LIMIT_EXCEEDED" });
    expect((await deliver(b.url, b.secret, other)).status).toBe(200);
  });

  it("an unknown app or a malformed id answers 404; GET answers 405", async () => {
    expect((await deliver(`${ORIGIN}/webhooks/apps/${crypto.randomUUID()}`, "x")).status).toBe(404);
    expect((await deliver(`${ORIGIN}/webhooks/apps/not-an-id`, "x")).status).toBe(404);
    const get = await workerExports.default.fetch(new Request(`${ORIGIN}/webhooks/apps/${crypto.randomUUID()}`));
    expect(get.status).toBe(405);
  });
});
