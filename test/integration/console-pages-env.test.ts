import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { apps } from "../../src/db/schema";
import { PageClient, signedUpPage } from "./console-pages-helpers";

/**
 * The app page's Environment section as a browser without script uses it (issue 14): rows with
 * their messages under them, Add variable and Remove as round trips, the paste preview, and the
 * replace confirmation that needs the word REPLACE.
 */

let n = 0;
async function newApp(client: PageClient): Promise<string> {
  const res = await client.post("/console/apps", {
    name: "Env page",
    repository: "https://git.example.com/acme/env",
    branch: "main",
    root_directory: "",
    dockerfile_path: "Dockerfile",
    subdomain: `envpage-${Date.now() % 100000}-${++n}`,
    plan: "lite",
  });
  expect(res.status).toBe(303);
  return /^\/console\/apps\/([0-9a-f-]{36})$/.exec(res.headers.get("Location")!)![1]!;
}

async function saved(client: PageClient, id: string): Promise<{ version: number; variables: { key: string; value: string }[] }> {
  return (await client.get(`/console/api/apps/${id}/env`)).json();
}

const flashNotice = (html: string) => /<p class="notice" role="status">([^<]*)<\/p>/.exec(html)?.[1];
const flashError = (html: string) => /<p class="alert" role="alert">([^<]*)<\/p>/.exec(html)?.[1];
const rowErrors = (html: string, row: number) =>
  [...(new RegExp(`<ul class="field-error env-row-errors" id="env-row-${row}-error">(.*?)</ul>`).exec(html)?.[1] ?? "").matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]);
const keyInput = (html: string, row: number) => new RegExp(`<input id="env-key-${row}" name="key_${row}" type="text" value="([^"]*)"`).exec(html)?.[1];

/** Posts a form that ends in a redirect to the Environment tab; returns the page it leads to. */
async function postAndFollow(client: PageClient, path: string, form: Record<string, string>, id: string): Promise<string> {
  const res = await client.post(path, form);
  expect(res.status).toBe(303);
  expect(res.headers.get("Location")).toBe(`/console/apps/${id}/environment`);
  return client.page(`/console/apps/${id}/environment`);
}

describe("console pages: environment variables", () => {
  it("shows the Environment section with one empty row, Add variable, the paste box with merge and replace", async () => {
    const client = await signedUpPage();
    const id = await newApp(client);
    const html = await client.page(`/console/apps/${id}/environment`);
    expect(html).toContain('<h2 id="environment-heading">Environment</h2>');
    expect(keyInput(html, 0)).toBe("");
    expect(html).toMatch(/<button type="submit" name="action" value="add" class="secondary">Add variable<\/button>/);
    expect(html).toContain('<label for="env-paste-text">Paste variables</label>');
    expect(html).toMatch(/<input type="radio" name="mode" value="merge" checked=""\/>/);
    expect(html).toMatch(/<input type="radio" name="mode" value="replace"\/>/);
    expect(html).toContain("Saved variables are used from the first deploy.");
  });

  it("saves rows, keeps every row's messages under it when any is invalid (nothing saved), adds and removes rows", async () => {
    const client = await signedUpPage();
    const id = await newApp(client);
    const path = `/console/apps/${id}/env`;
    const bad = await client.post(path, {
      version: "0",
      rows: "5",
      key_0: "GOOD",
      value_0: "1",
      key_1: "port",
      value_1: "80",
      key_2: "PORT",
      value_2: "80",
      key_3: "BIG",
      value_3: "a".repeat(65_537),
      key_4: "PORTAL",
      value_4: "ok",
      action: "save",
    });
    expect(bad.status).toBe(400);
    const page = await bad.text();
    expect(rowErrors(page, 0)).toEqual([]);
    expect(rowErrors(page, 1)).toEqual(["port is reserved by the platform.", "Use uppercase letters, digits, and underscores for the key."]);
    expect(rowErrors(page, 2)).toEqual(["PORT is reserved by the platform."]);
    expect(rowErrors(page, 3)).toEqual(["This value exceeds the 64 KiB limit."]);
    expect(rowErrors(page, 4)).toEqual([]);
    expect(keyInput(page, 1)).toBe("port");
    expect((await saved(client, id)).version).toBe(0);

    const added = await client.post(path, { version: "0", rows: "1", key_0: "GOOD", value_0: "1", action: "add" });
    expect(added.status).toBe(200);
    const withRow = await added.text();
    expect(keyInput(withRow, 0)).toBe("GOOD");
    expect(keyInput(withRow, 1)).toBe("");

    const after = await postAndFollow(client, path, { version: "0", rows: "3", key_0: "GOOD", value_0: "line 1\r\nline 2", key_1: "GONE", value_1: "x", remove_1: "1", key_2: "", value_2: "", action: "save" }, id);
    expect(flashNotice(after)).toBe("Environment variables saved. They are used from the first deploy.");
    expect(await saved(client, id)).toEqual({ version: 1, variables: [{ key: "GOOD", value: "line 1\nline 2" }] });
    expect(keyInput(after, 0)).toBe("GOOD");

    const same = await postAndFollow(client, path, { version: "1", rows: "1", key_0: "GOOD", value_0: "line 1\nline 2", action: "save" }, id);
    expect(flashNotice(same)).toBe("Nothing changed: these are the variables already saved.");
    const stale = await postAndFollow(client, path, { version: "0", rows: "1", key_0: "GOOD", value_0: "other", action: "save" }, id);
    expect(flashError(stale)).toBe("Environment variables changed. Refresh and re-apply your changes.");
    expect((await saved(client, id)).version).toBe(1);
  });

  it("paste: a preview first (added, changed, removed, unchanged); replace lists what it deletes and needs REPLACE", async () => {
    const client = await signedUpPage();
    const id = await newApp(client);
    await client.post(`/console/apps/${id}/env`, { version: "0", rows: "3", key_0: "KEEP", value_0: "k", key_1: "CHANGE", value_1: "old", key_2: "DROP", value_2: "d", action: "save" });
    const paste = `/console/apps/${id}/env/paste`;
    const text = "# a comment\r\nCHANGE=new\r\nKEEP=k\r\nNEW=abc#def\r\n";

    const preview = await client.post(paste, { version: "1", text, mode: "replace" });
    expect(preview.status).toBe(200);
    const html = await preview.text();
    expect(html).toContain("<h1>Review the pasted variables</h1>");
    for (const [kind, keys] of [["added", ["NEW"]], ["changed", ["CHANGE"]], ["removed", ["DROP"]], ["unchanged", ["KEEP"]]] as const) {
      const list = new RegExp(`<div data-diff="${kind}">(.*?)</div>`).exec(html)?.[1] ?? "";
      expect([...list.matchAll(/<code>([^<]*)<\/code>/g)].map((m) => m[1])).toEqual(keys);
    }
    expect(html).toContain("Replace deletes this variable: <code>DROP</code>");
    expect(html).toContain('<label for="f-confirm">Type REPLACE to delete them</label>');
    expect((await saved(client, id)).version).toBe(1);

    const wrong = await client.post(paste, { version: "1", text, mode: "replace", step: "save", confirm: "replace" });
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('<p class="field-error" id="f-confirm-error">Type REPLACE in capital letters to delete these variables.</p>');
    expect((await saved(client, id)).version).toBe(1);

    const done = await postAndFollow(client, paste, { version: "1", text, mode: "replace", step: "save", confirm: "REPLACE" }, id);
    expect(flashNotice(done)).toBe("Environment variables saved. They are used from the first deploy.");
    expect(await saved(client, id)).toEqual({ version: 2, variables: [{ key: "KEEP", value: "k" }, { key: "CHANGE", value: "new" }, { key: "NEW", value: "abc#def" }] });

    const merge = await client.post(paste, { version: "2", text: "EXTRA=1", mode: "merge" });
    const mergeHtml = await merge.text();
    expect(mergeHtml).not.toContain("f-confirm");
    expect(mergeHtml).toContain("Merge mode: variables absent from the pasted text are kept.");
  });

  it("paste: lines that cannot be used are listed by number under the paste box, the text kept, nothing saved", async () => {
    const client = await signedUpPage();
    const id = await newApp(client);
    const res = await client.post(`/console/apps/${id}/env/paste`, { version: "0", text: "A=1\n# note\nPATH=/bin\nhome=x\n", mode: "merge" });
    expect(res.status).toBe(400);
    const html = await res.text();
    const errors = [...(/<ul class="field-error env-paste-errors" id="env-paste-errors">(.*?)<\/ul>/.exec(html)?.[1] ?? "").matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]);
    expect(errors).toEqual([
      "Line 3 (PATH): PATH is reserved by the platform.",
      "Line 4 (home): home is reserved by the platform.",
      "Line 4 (home): Use uppercase letters, digits, and underscores for the key.",
    ]);
    expect(html).toContain("A=1\n# note\nPATH=/bin\nhome=x\n</textarea>");
    const stale = await postAndFollow(client, `/console/apps/${id}/env/paste`, { version: "7", text: "A=1" }, id);
    expect(flashError(stale)).toBe("Environment variables changed. Refresh and re-apply your changes.");
    expect((await saved(client, id)).version).toBe(0);
  });

  it("says when the running instance still has the previous set, with the log of the failed check", async () => {
    const client = await signedUpPage();
    const id = await newApp(client);
    await database(env)
      .update(apps)
      .set({ status: "running", envVersion: 3, envAppliedVersion: 2, envFailure: { version: 3, message: "The container started but nothing answered on port 8080.", log: "Started instance abc; probing port 8080", at: Date.now() } })
      .where(eq(apps.id, id));
    const html = await client.page(`/console/apps/${id}`);
    expect(html).toContain("The running instance still has the previous set of variables");
    expect(html).toContain("The container started but nothing answered on port 8080.");
    expect(html).toContain("Started instance abc; probing port 8080");
    const json = await (await client.get(`/console/api/apps/${id}`)).json<{ env: unknown }>();
    expect(json.env).toEqual({ version: 3, applied_version: 2, applying: false, failure: { version: 3, message: "The container started but nothing answered on port 8080.", log: "Started instance abc; probing port 8080" } });
  });

  it("another account's app answers 404 to the forms", async () => {
    const owner = await signedUpPage();
    const id = await newApp(owner);
    const stranger = await signedUpPage();
    expect((await stranger.post(`/console/apps/${id}/env`, { version: "0", rows: "0", action: "save" })).status).toBe(404);
    expect((await stranger.post(`/console/apps/${id}/env/paste`, { version: "0", text: "A=1" })).status).toBe(404);
  });
});
