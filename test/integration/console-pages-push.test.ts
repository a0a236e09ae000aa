import { describe, expect, it } from "vitest";
import { PageClient, fieldError, signedUpPage } from "./console-pages-helpers";

/**
 * The app page's "Private repository and deploy on push" section without script: the access
 * token form (a password field, never filled back in), Remove token, and New secret, whose
 * secret is shown in that reply only.
 */

let n = 0;
async function newApp(client: PageClient): Promise<string> {
  const res = await client.post("/console/apps", {
    name: "Push page",
    repository: "https://git.example.com/acme/push",
    branch: "main",
    root_directory: "",
    dockerfile_path: "Dockerfile",
    subdomain: `pushpage-${Date.now() % 100000}-${++n}`,
    plan: "lite",
  });
  expect(res.status).toBe(303);
  return /^\/console\/apps\/([0-9a-f-]{36})$/.exec(res.headers.get("Location")!)![1]!;
}

const flashNotice = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];

describe("console pages: private repository and deploy on push", () => {
  it("saves the access token write-only, then removes it", async () => {
    const client = await signedUpPage();
    const id = await newApp(client);
    const before = await client.page(`/console/apps/${id}/settings`);
    expect(before).toContain('<input id="f-source_token" name="source_token" type="password" value=""');
    expect(before).not.toContain("Remove token");

    const res = await client.post(`/console/apps/${id}/source-token`, { source_token: "gitea-token-secret-1" });
    expect(res.status).toBe(303);
    const after = await client.page(`/console/apps/${id}/settings`);
    expect(flashNotice(after)).toBe("Access token saved. The next deploy uses it; it is not shown again.");
    expect(after).toContain("An access token is saved.");
    expect(after).not.toContain("gitea-token-secret-1");
    expect((await (await client.get(`/console/api/apps/${id}`)).json<{ source_token_set: boolean }>()).source_token_set).toBe(true);

    expect((await client.post(`/console/apps/${id}/source-token/remove`, {})).status).toBe(303);
    expect((await (await client.get(`/console/api/apps/${id}`)).json<{ source_token_set: boolean }>()).source_token_set).toBe(false);
  });

  it("shows a bad token's message under the field, and saves nothing", async () => {
    const client = await signedUpPage();
    const id = await newApp(client);
    const res = await client.post(`/console/apps/${id}/source-token`, { source_token: "has a space" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(fieldError(html, "source_token")).toBe("An access token is printable characters with no spaces.");
    expect(html).not.toContain('value="has a space"');
  });

  it("New secret shows the webhook URL and the secret once; a reload shows only that one is set", async () => {
    const client = await signedUpPage();
    const id = await newApp(client);
    const before = await client.page(`/console/apps/${id}/settings`);
    expect(before).toContain(`<code data-webhook-url="">http://control.test/webhooks/apps/${id}</code>`);
    expect(before).toContain("No secret yet");
    const res = await client.post(`/console/apps/${id}/webhook/rotate`, {});
    expect(res.status).toBe(200);
    const html = await res.text();
    const secret = /Secret \(shown this once\): <code>([0-9a-f]{64})<\/code>/.exec(html)?.[1];
    expect(secret).toBeDefined();
    const reload = await client.page(`/console/apps/${id}/settings`);
    expect(reload).not.toContain(secret!);
    expect(reload).toContain("A secret is set; it is not shown again.");
  });

  it("another account's app answers 404 to every form", async () => {
    const owner = await signedUpPage();
    const id = await newApp(owner);
    const stranger = await signedUpPage();
    for (const path of ["source-token", "source-token/remove", "webhook/rotate"]) {
      expect((await stranger.post(`/console/apps/${id}/${path}`, { source_token: "x" })).status).toBe(404);
    }
  });
});
