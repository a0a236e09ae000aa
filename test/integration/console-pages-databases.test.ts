import { deadlineFor } from "../../src/exports/job-limits";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { verifyDownloadLink } from "../../src/auth/links";
import { getConfig } from "../../src/config";
import { fieldError, signedUpPage, type PageClient } from "./console-pages-helpers";

async function createDatabase(client: PageClient, name: string): Promise<string> {
  const res = await client.post("/console/databases", { name });
  expect(res.status).toBe(303);
  return /^\/console\/databases\/([0-9a-f-]{36})$/.exec(res.headers.get("Location")!)![1]!;
}

/** An export record written directly, so no running job can change it under the test. */
async function insertExport(databaseId: string, status: "running" | "ready", finishedAt: number | null): Promise<string> {
  const id = crypto.randomUUID();
  const ready = status === "ready";
  // Created at its finish time when ready (so the cooldown counts from then), else now.
  await env.DB.prepare(
    "INSERT INTO exports (id, database_id, status, created_at, finished_at, size_bytes, sha256, deadline_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  )
    .bind(id, databaseId, status, finishedAt ?? Date.now(), finishedAt, ready ? 2048 : null, ready ? "ab".repeat(32) : null, deadlineFor(Date.now()))
    .run();
  return id;
}

const exportIds = (html: string) => [...html.matchAll(/data-export-id="([^"]+)"/g)].map((m) => m[1]!);

describe("console pages: databases", () => {
  it("lists, creates with errors next to the field, and deletes behind a confirmation naming the database", async () => {
    const client = await signedUpPage();
    expect(await client.page("/console/databases")).toContain("No databases yet");

    const bad = await client.post("/console/databases", { name: "" });
    expect(bad.status).toBe(400);
    expect(fieldError(await bad.text(), "name")).toBe("Give the database a name.");

    const id = await createDatabase(client, "orders");
    expect(await client.page(`/console/databases/${id}`)).toContain("Database “orders” created.");
    expect(await client.page("/console/databases")).toContain(`<a href="/console/databases/${id}">orders</a>`);

    const confirm = await client.page(`/console/databases/${id}/delete`);
    expect(confirm).toContain("Delete “orders”?");
    expect(confirm).toContain("Delete orders</button>");
    const gone = await client.post(`/console/databases/${id}/delete`, {});
    expect(gone.headers.get("Location")).toBe("/console/databases");
    expect(await client.page("/console/databases")).toContain("Database “orders” deleted.");
    expect((await client.get(`/console/databases/${id}`)).status).toBe(404);
  });

  it("answers another account's database exactly like a missing one, as an HTML page", async () => {
    const owner = await signedUpPage();
    const id = await createDatabase(owner, "private");
    const stranger = await signedUpPage();
    const theirs = await stranger.get(`/console/databases/${id}`);
    const missing = await stranger.get(`/console/databases/${crypto.randomUUID()}`);
    expect(theirs.status).toBe(404);
    expect(theirs.headers.get("Content-Type")).toContain("text/html");
    const strip = (html: string) => html.replace(/name="_csrf" value="[^"]*"/, "");
    expect(strip(await theirs.text())).toBe(strip(await missing.text()));
  });

  it("runs SQL: rows as a table, writes counted, NULL and BLOB marked, errors next to the box", async () => {
    const client = await signedUpPage();
    const id = await createDatabase(client, "notes");
    const sql = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, pic BLOB); INSERT INTO notes (body, pic) VALUES ('<b>hi</b>', x'0102'), (NULL, NULL);";
    const write = await client.post(`/console/databases/${id}/sql`, { sql });
    expect(write.status).toBe(200);
    const written = await write.text();
    expect(written).toContain("Statement 2: 2 rows written.");
    expect(written).toContain("CREATE TABLE notes");

    const read = await (await client.post(`/console/databases/${id}/sql`, { sql: "SELECT id, body, pic FROM notes ORDER BY id" })).text();
    expect(read).toContain("2 rows.");
    expect(read).toContain("<td>&lt;b&gt;hi&lt;/b&gt;</td>");
    expect(read).toContain('<td class="null">NULL</td>');
    expect(read).toContain('<td class="null">BLOB, 2 B</td>');

    const broken = await client.post(`/console/databases/${id}/sql`, { sql: "SELECT * FROM nowhere" });
    expect(broken.status).toBe(400);
    const html = await broken.text();
    expect(fieldError(html, "sql")).toMatch(/^Statement 1: no such table: nowhere/);
    expect(html).toContain("SELECT * FROM nowhere</textarea>");
  });
});

describe("console pages: exports", () => {
  it("starts an export through the gate", async () => {
    const client = await signedUpPage();
    const id = await createDatabase(client, "shop");
    expect(await client.page(`/console/databases/${id}`)).toContain("No exports yet");

    const start = await client.post(`/console/databases/${id}/exports`, {});
    expect(start.headers.get("Location")).toBe(`/console/databases/${id}#exports`);
    const started = await client.page(`/console/databases/${id}`);
    expect(started).toContain("Export started.");
    expect(exportIds(started)).toHaveLength(1);
    const row = await env.DB.prepare("SELECT status FROM exports WHERE database_id = ?").bind(id).first<{ status: string }>();
    expect(row).not.toBeNull();
  });

  it("says in words how long to wait while an export is in flight, and offers a refresh link", async () => {
    const client = await signedUpPage();
    const id = await createDatabase(client, "busy");
    const exportId = await insertExport(id, "running", null);
    const html = await client.page(`/console/databases/${id}`);
    expect(html).toContain('data-status="running"');
    expect(html).toContain("data-refresh-link");

    await client.post(`/console/databases/${id}/exports`, {});
    const refused = await client.page(`/console/databases/${id}`);
    expect(refused).toContain("An export of this database is already being prepared. Wait 5 seconds");
    expect(exportIds(refused)).toEqual([exportId]);
  });

  it("explains instead of redirecting when an export cannot be downloaded yet", async () => {
    const client = await signedUpPage();
    const id = await createDatabase(client, "early");
    const exportId = await insertExport(id, "running", null);
    const early = await client.get(`/console/databases/${id}/exports/${exportId}/download`);
    expect(early.headers.get("Location")).toBe(`/console/databases/${id}#exports`);
    expect(await client.page(`/console/databases/${id}`)).toContain("still being prepared");
  });

  it("shows a ready export, refuses a start in cooldown in words, downloads with a fresh signed link", async () => {
    const client = await signedUpPage();
    const id = await createDatabase(client, "ready");
    const exportId = await insertExport(id, "ready", Date.now());

    await client.post(`/console/databases/${id}/exports`, {});
    const html = await client.page(`/console/databases/${id}`);
    expect(html).toMatch(/exported recently\. You can start the next export in (4 minutes \d+ seconds|5 minutes)\./);
    expect(html).toContain('data-status="ready"');
    expect(html).toContain('<abbr title="2,048 bytes">2.0 KiB</abbr>');
    expect(html).toContain(`data-sha256="${"ab".repeat(32)}"`);
    expect(html).not.toContain("data-refresh-link");

    const live = await client.get(`/console/databases/${id}/exports/live`);
    expect(await live.text()).toContain(`data-export-id="${exportId}"`);

    const download = await client.get(`/console/databases/${id}/exports/${exportId}/download`);
    expect(download.status).toBe(303);
    const link = new URL(download.headers.get("Location")!);
    expect(link.pathname).toBe(`/api/v1/dbs/${id}/exports/${exportId}/download`);
    const verdict = await verifyDownloadLink(getConfig(env).LINK_SIGNING_KEYS, {
      path: link.pathname,
      exp: link.searchParams.get("exp"),
      sig: link.searchParams.get("sig"),
      now: Date.now(),
    });
    expect(verdict.ok).toBe(true);

    const stranger = await signedUpPage();
    expect((await stranger.get(`/console/databases/${id}/exports/${exportId}/download`)).status).toBe(404);
  });

  it("shows a ready export past its retention as expired, with no download button", async () => {
    const client = await signedUpPage();
    const id = await createDatabase(client, "old");
    const exportId = await insertExport(id, "ready", Date.now() - (getConfig(env).ARCHIVE_RETENTION_SECONDS + 60) * 1000);
    const html = await client.page(`/console/databases/${id}`);
    expect(html).toContain('data-status="expired"');
    expect(html).not.toContain(`/exports/${exportId}/download"`);
    await client.get(`/console/databases/${id}/exports/${exportId}/download`);
    expect(await client.page(`/console/databases/${id}`)).toContain("past its retention time");
  });
});
