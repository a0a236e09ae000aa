import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { appController } from "../../src/apps/app-controller";
import { CHANGE_IN_FLIGHT_MESSAGE, DELETE_FAILED_MESSAGE } from "../../src/apps/controls";
import { deployLogKey } from "../../src/apps/deploy-log";
import { httpdFiles, publishRepository } from "./apps-helpers";
import { PageClient, fieldError, inputValue, signedUpPage } from "./console-pages-helpers";

/**
 * The app pages as a browser without script uses them: forms posted, redirects followed by hand,
 * flash messages read on the next page. Deploys run for real on the fake engine and forge.
 */

const REPO = "https://git.example.com/acme/shop";

async function createApp(client: PageClient, form: Record<string, string>): Promise<string> {
  const res = await client.post("/console/apps", { branch: "main", root_directory: "", dockerfile_path: "Dockerfile", subdomain: "", plan: "lite", ...form });
  expect(res.status).toBe(303);
  return /^\/console\/apps\/([0-9a-f-]{36})$/.exec(res.headers.get("Location")!)![1]!;
}

interface AppJson {
  status: string;
  deploy_in_progress: boolean;
  latest_deploy: { id: string; status: string; failure?: { message: string } } | null;
}

async function appJson(client: PageClient, id: string): Promise<AppJson> {
  return (await client.get(`/console/api/apps/${id}`)).json();
}

async function waitForDeploy(client: PageClient, id: string): Promise<AppJson> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const app = await appJson(client, id);
    if (!app.deploy_in_progress) return app;
    if (Date.now() > deadline) throw new Error("deploy still running");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Posts a control's form and returns the flash shown on the app page it leads back to. */
async function press(client: PageClient, id: string, action: string, form: Record<string, string> = {}): Promise<string> {
  const res = await client.post(`/console/apps/${id}/${action}`, form);
  expect(res.status).toBe(303);
  expect(res.headers.get("Location")).toBe(`/console/apps/${id}`);
  return client.page(`/console/apps/${id}`);
}

const button = (html: string, label: string) => new RegExp(`<button[^>]*>${label}</button>`).exec(html)?.[0];
const flashNotice = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];
const flashError = (html: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
const escape = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

describe("console pages: apps", () => {
  it("sends a signed-out visitor to sign in and back", async () => {
    const res = await new PageClient().get("/console/apps/new");
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe(`/console/signin?next=${encodeURIComponent("/console/apps/new")}`);
  });

  it("lists apps, shows the New app form with its defaults and plans, and keeps values with errors under the fields", async () => {
    const client = await signedUpPage(undefined, { credit: 100_000 });
    const list = await client.page("/console/apps");
    expect(list).toContain('<a href="/console/apps" aria-current="page">Apps</a>');
    expect(list).toContain("No apps yet");
    expect(list).toContain('<a class="button" href="/console/apps/new">New app</a>');

    const form = await client.page("/console/apps/new");
    for (const label of ["Name", "Repository", "Branch", "Root directory", "Dockerfile path", "Subdomain"]) expect(form).toContain(`>${label}</label>`);
    expect(inputValue(form, "f-branch")).toBe("main");
    expect(inputValue(form, "f-dockerfile_path")).toBe("Dockerfile");
    expect(form).toContain("<legend>Plan</legend>");
    expect(form).toContain("<strong>Lite</strong> <span class=\"muted\">256 MB memory · 0.25 CPU · 2 GB disk · 1,200 DA per month</span>");
    expect(form).toMatch(/<input type="radio" name="plan" value="lite" checked=""\/>/);

    for (const [subdomain, message] of [
      ["ab", "A subdomain is 3 to 63 characters long."],
      ["Shop", "Use only lowercase letters, digits and hyphens in a subdomain."],
      ["-shop", "A subdomain cannot start or end with a hyphen."],
      ["app-shop", 'Subdomains starting with "app-" are kept for generated names.'],
      ["console", 'The subdomain "console" is reserved.'],
    ] as const) {
      const res = await client.post("/console/apps", { name: "shop", repository: REPO, branch: "dev", subdomain, plan: "pro" });
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(fieldError(html, "subdomain")).toBe(escape(message));
      expect(inputValue(html, "f-subdomain")).toBe(escape(subdomain));
      expect(inputValue(html, "f-name")).toBe("shop");
      expect(inputValue(html, "f-branch")).toBe("dev");
      expect(html).toMatch(/value="pro" checked=""/);
    }
    const blank = await client.post("/console/apps", { name: " ", repository: "ftp://example.com/x", plan: "lite" });
    expect(blank.status).toBe(400);
    const blankHtml = await blank.text();
    expect(fieldError(blankHtml, "name")).toBe("Give the app a name.");
    expect(fieldError(blankHtml, "repository")).toBeTruthy();
  });

  it("creates an app with a generated or chosen subdomain, refuses one in use, and shows it on its page and in the list", async () => {
    const client = await signedUpPage(undefined, { credit: 100_000 });
    const subdomain = `shop-${crypto.randomUUID().slice(0, 8)}`;
    const id = await createApp(client, { name: "shop", repository: REPO, subdomain });
    const page = await client.page(`/console/apps/${id}`);
    expect(flashNotice(page)).toBe("App “shop” created. Press Deploy to build it from branch main.");
    expect(page).toContain(`<a href="http://${subdomain}.localhost" rel="noopener noreferrer" data-app-url="">${subdomain}.localhost</a>`);
    expect(page).toContain('data-app-status="not_deployed">Not deployed</span>');
    expect(page).toContain("read from the Dockerfile at the first deploy");
    expect(button(page, "Deploy")).not.toContain("disabled");
    for (const absent of ["Stop", "Start", "Restart", "Redeploy"]) expect(button(page, absent)).toBeUndefined();
    expect(button(page, "Change plan")).toBeDefined();
    expect(page).toContain("No deploys yet");
    // The settings form is on the Settings tab.
    expect(inputValue(page, "f-subdomain")).toBeUndefined();
    expect(inputValue(await client.page(`/console/apps/${id}/settings`), "f-subdomain")).toBe(subdomain);

    const taken = await client.post("/console/apps", { name: "copy", repository: REPO, subdomain, plan: "lite" });
    expect(taken.status).toBe(409);
    expect(fieldError(await taken.text(), "subdomain")).toBe("This subdomain is already in use. Choose another.");

    const generated = await createApp(client, { name: "blank", repository: REPO });
    const list = await client.page("/console/apps");
    expect(list).toContain(`<a href="/console/apps/${id}">shop</a>`);
    expect(list).toContain(`app-${generated.replace(/-/g, "").slice(0, 12)}.localhost</a>`);
    expect(list).toContain("<td>Lite</td>");
  });

  it("saves settings, shows rule errors inline, and fixes the subdomain after the first deploy", async () => {
    const client = await signedUpPage(undefined, { credit: 100_000 });
    const id = await createApp(client, { name: "site", repository: REPO });
    const bad = await client.post(`/console/apps/${id}/settings`, { name: "site", repository: REPO, branch: "main", root_directory: "", dockerfile_path: "Dockerfile", subdomain: "www" });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(fieldError(badHtml, "subdomain")).toBe(escape('The subdomain "www" is reserved.'));
    expect(inputValue(badHtml, "f-subdomain")).toBe("www");

    const subdomain = `site-${crypto.randomUUID().slice(0, 8)}`;
    const posted = await client.post(`/console/apps/${id}/settings`, { name: "site two", repository: REPO, branch: "release", root_directory: "web", dockerfile_path: "", subdomain });
    expect(posted.status).toBe(303);
    expect(posted.headers.get("Location")).toBe(`/console/apps/${id}/settings`);
    const saved = await client.page(`/console/apps/${id}/settings`);
    expect(flashNotice(saved)).toBe("Settings saved. The next deploy uses them.");
    expect(inputValue(saved, "f-name")).toBe("site two");
    expect(inputValue(saved, "f-branch")).toBe("release");
    expect(inputValue(saved, "f-root_directory")).toBe("web");
    expect(inputValue(saved, "f-dockerfile_path")).toBe("Dockerfile");
    expect(await client.page(`/console/apps/${id}`)).toContain(`${subdomain}.localhost</a>`);

    await env.DB.prepare("UPDATE apps SET first_deploy_at = ? WHERE id = ?").bind(Date.now(), id).run();
    const fixed = await client.page(`/console/apps/${id}/settings`);
    expect(inputValue(fixed, "f-subdomain")).toBeUndefined();
    expect(fixed).toContain(`<code>${subdomain}</code>`);
    expect(fixed).toContain("The subdomain is fixed since the app&#39;s first deploy.");
  });

  it("deploys from the form: Deploying… that does nothing, then live with Redeploy, Stop and Restart; Stop, Start, Restart, Change plan", async () => {
    const client = await signedUpPage(undefined, { credit: 100_000 });
    const repository = await publishRepository(`web-${crypto.randomUUID().slice(0, 8)}`, httpdFiles("<h1>hello</h1>", { buildSeconds: 2 }));
    const id = await createApp(client, { name: "web", repository });

    const started = await press(client, id, "deploy");
    expect(flashNotice(started)).toBe("Deploy started from branch main. Its log is under Deploys.");
    expect(button(started, "Deploying…")).toContain("disabled");
    expect(button(started, "Deploy")).toBeUndefined();
    expect(started).toContain('data-deploying="true"');
    expect(started).toContain('<a href="/console/apps/' + id + '">Refresh</a>');
    const deployId = /data-deploy-id="([0-9a-f-]{36})"/.exec(started)![1]!;

    // Pressed again while it runs (a second tab): nothing visible, no second deploy.
    const again = await press(client, id, "deploy");
    expect(flashNotice(again)).toBeUndefined();
    expect(flashError(again)).toBeUndefined();
    expect([...again.matchAll(/data-deploy-id="/g)]).toHaveLength(1);
    // Other changes are refused with the try-again message while the deploy runs.
    expect(flashError(await press(client, id, "plan", { plan: "pro" }))).toBe(CHANGE_IN_FLIGHT_MESSAGE);
    expect(flashError(await press(client, id, "delete"))).toBe(DELETE_FAILED_MESSAGE);

    const running = await client.page(`/console/apps/${id}/deploys/${deployId}`);
    expect(running).toContain('data-log-src="/console/api/apps/' + id + "/deploys/" + deployId + '/log"');
    expect(running).toContain(`href="/console/apps/${id}/deploys/${deployId}" data-refresh-link="">`);

    expect((await waitForDeploy(client, id)).status).toBe("running");
    const live = await client.page(`/console/apps/${id}`);
    expect(live).toContain('data-app-status="running">Running</span>');
    expect(live).toContain("<strong>8080</strong> <span class=\"muted\">(first EXPOSE line, 8080)</span>");
    expect(live).toContain('data-deploy-status="live">Live</span>');
    for (const label of ["Redeploy", "Restart", "Stop"]) expect(button(live, label)).toBeDefined();
    expect(button(live, "Start")).toBeUndefined();
    expect(live).not.toContain("failure-panel");

    const log = await client.page(`/console/apps/${id}/deploys/${deployId}`);
    expect(log).toMatch(/<pre class="log" id="deploy-log"[^>]*>[^<]*==&gt; Fetching branch main/);
    expect(log).not.toContain("data-refresh-link");

    const stopped = await press(client, id, "stop");
    expect(flashNotice(stopped)).toBe("App stopped. Its settings are kept; press Start to bring it back.");
    expect(button(stopped, "Start")).toBeDefined();
    expect(button(stopped, "Stop")).toBeUndefined();
    // A stale page's Stop on a stopped app: the controller's sentence.
    expect(flashError(await press(client, id, "stop"))).toBe("Only a running app can be stopped.");
    expect(flashNotice(await press(client, id, "plan", { plan: "starter" }))).toBe("Plan changed to Starter. The new limits apply when the app starts.");
    expect(flashNotice(await press(client, id, "start"))).toBe("App started on the Starter plan.");
    expect(flashNotice(await press(client, id, "restart"))).toBe("App restarted from the same image.");
    expect(flashNotice(await press(client, id, "plan", { plan: "starter" }))).toBe("The app is already on the Starter plan. Nothing changed.");
  });

  it("shows a failed deploy's red panel with its message and the link to the full log", async () => {
    const client = await signedUpPage(undefined, { credit: 100_000 });
    const repository = await publishRepository(`nofile-${crypto.randomUUID().slice(0, 8)}`, { "README.md": "no build file", "web/Containerfile": "FROM scratch\n" });
    const id = await createApp(client, { name: "broken", repository });
    await press(client, id, "deploy");
    const app = await waitForDeploy(client, id);
    expect(app.status).toBe("failed");
    const message = app.latest_deploy!.failure!.message;
    expect(message).toContain("web/Containerfile");

    const page = await client.page(`/console/apps/${id}`);
    expect(page).toContain('<h2 id="failure-heading">The last deploy failed</h2>');
    expect(page).toContain(`<p class="failure-message">${escape(message)}</p>`);
    expect(page).toContain(`<a href="/console/apps/${id}/deploys/${app.latest_deploy!.id}">Read the full log of deploy ${app.latest_deploy!.id.slice(0, 8)}</a>`);
    expect(page).toContain('data-app-status="failed">Failed</span>');
    expect(button(page, "Redeploy")).toBeDefined();

    const log = await client.page(`/console/apps/${id}/deploys/${app.latest_deploy!.id}`);
    expect(log).toContain("This deploy failed");
    expect(log).toContain(escape(`==> Deploy failed: ${message}`));
  });

  it("shows a deploy's log escaped, and 404s another account's app or an unknown deploy", async () => {
    const owner = await signedUpPage(undefined, { credit: 100_000 });
    const id = await createApp(owner, { name: "logs", repository: REPO });
    const deployId = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO deploys (id, app_id, status, started_at, finished_at) VALUES (?, ?, 'superseded', ?, ?)")
      .bind(deployId, id, Date.now() - 5000, Date.now())
      .run();
    await env.LOGS.put(deployLogKey(id, deployId), "==> Building\n<script>alert(1)</script>\n");
    const log = await owner.page(`/console/apps/${id}/deploys/${deployId}`);
    expect(log).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(log).toContain('data-deploying="false"');
    expect((await owner.get(`/console/apps/${id}/deploys/${crypto.randomUUID()}`)).status).toBe(404);

    const stranger = await signedUpPage(undefined, { credit: 100_000 });
    const theirs = await stranger.get(`/console/apps/${id}`);
    expect(theirs.status).toBe(404);
    expect(theirs.headers.get("Content-Type")).toContain("text/html");
    expect((await stranger.post(`/console/apps/${id}/deploy`, {})).status).toBe(404);
  });

  it("deletes behind a confirmation page naming the app; a delete during a deploy is refused with the generic message", async () => {
    const client = await signedUpPage(undefined, { credit: 100_000 });
    const id = await createApp(client, { name: "gone", repository: REPO });
    const page = await client.page(`/console/apps/${id}/settings`);
    expect(page).toContain(`<a class="button danger" href="/console/apps/${id}/delete">Delete</a>`);
    const confirm = await client.page(`/console/apps/${id}/delete`);
    expect(confirm).toContain("<h1>Delete gone?</h1>");
    expect(confirm).toContain("<p>This cannot be undone.</p>");
    expect(confirm).toContain(">Delete gone</button>");

    // A deploy in flight, as the controller records it.
    const stub = appController(env, id);
    await runInDurableObject(stub as unknown as DurableObjectStub, (_instance: unknown, state) =>
      state.storage.kv.put("in_flight", { kind: "deploy", deployId: crypto.randomUUID(), since: Date.now() }),
    );
    const refused = await client.post(`/console/apps/${id}/delete`, {});
    expect(refused.headers.get("Location")).toBe(`/console/apps/${id}`);
    expect(flashError(await client.page(`/console/apps/${id}`))).toBe(DELETE_FAILED_MESSAGE);
    await runInDurableObject(stub as unknown as DurableObjectStub, (_instance: unknown, state) => state.storage.kv.delete("in_flight"));

    const gone = await client.post(`/console/apps/${id}/delete`, {});
    expect(gone.headers.get("Location")).toBe("/console/apps");
    expect(flashNotice(await client.page("/console/apps"))).toBe("App “gone” deleted. Its address no longer answers.");
    expect((await client.get(`/console/apps/${id}`)).status).toBe(404);
  });
});
