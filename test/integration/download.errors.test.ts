import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EXPORT_DLQ } from "../../src/exports/job-limits";
import { RECORD_KEEP_MS } from "../../src/exports/record-keep";
import { archiveKey, claimExport } from "../../src/exports/store";
import { sweepExpiredArchives } from "../../src/exports/retention";
import { envWith } from "./api-helpers";
import { T0, deliver, pendingExport } from "./export-helpers";
import { READY_AT, downloadClient, linkFor, readyExport } from "./download-helpers";

const RETENTION_MS = Number(env.ARCHIVE_RETENTION_SECONDS) * 1000;

describe("download: link checks", () => {
  it.each([
    ["without sig", (u: URL) => u.searchParams.delete("sig")],
    ["without exp", (u: URL) => u.searchParams.delete("exp")],
    ["with a non-numeric exp", (u: URL) => u.searchParams.set("exp", "soon")],
    ["with exp moved later", (u: URL) => u.searchParams.set("exp", String(Number(u.searchParams.get("exp")) + 3600))],
    ["with one character of sig changed", (u: URL) => u.searchParams.set("sig", flip(u.searchParams.get("sig")!))],
    ["for another export", (u: URL) => (u.pathname = u.pathname.replace(/exports\/[^/]+/, `exports/${crypto.randomUUID()}`))],
    // The route has no schema validators (the signature covers the path and exp): junk is refused by the signature.
    ["with a database id that is not a UUID", (u: URL) => (u.pathname = u.pathname.replace(/dbs\/[^/]+/, "dbs/1%20OR%201=1"))],
    ["with an exp of 1e99", (u: URL) => u.searchParams.set("exp", "1e99")],
  ])("answers 401 SIGNED_URL_INVALID %s", async (_name, tamper) => {
    const { url } = await readyExport();
    const bad = new URL(url);
    tamper(bad);
    const { res, json } = await downloadClient().ask(bad.toString());
    expect(res.status).toBe(401);
    expect(json()).toEqual({ success: false, error: expect.any(String), code: "SIGNED_URL_INVALID" });
  });

  it("answers 401 SIGNED_URL_EXPIRED after exp, and only for a genuine link", async () => {
    const { url } = await readyExport();
    const exp = Number(new URL(url).searchParams.get("exp"));
    const client = downloadClient(env, exp * 1000);
    expect((await client.ask(url)).res.status).toBe(200);
    client.clock.now = exp * 1000 + 1;
    const expired = await client.ask(url);
    expect(expired.res.status).toBe(401);
    expect(expired.json()).toMatchObject({ success: false, code: "SIGNED_URL_EXPIRED" });
    const forged = new URL(url);
    forged.searchParams.set("sig", flip(forged.searchParams.get("sig")!));
    expect((await client.ask(forged.toString())).json()).toMatchObject({ code: "SIGNED_URL_INVALID" });
  });

  it("checks signature and expiry before the rate limit, and the rate limit before the record", async () => {
    const tight = envWith({ RATE_LIMIT_BURST: "1", RATE_LIMIT_PER_MINUTE: "1" });
    const { url, databaseId } = await readyExport();
    const client = downloadClient(tight);
    const forged = new URL(url);
    forged.searchParams.set("sig", flip(forged.searchParams.get("sig")!));
    for (let i = 0; i < 3; i++) expect((await client.ask(forged.toString())).res.status).toBe(401);
    expect((await client.ask(url)).res.status).toBe(200);

    const limited = await client.ask(url);
    expect(limited.res.status).toBe(429);
    expect(limited.json()).toMatchObject({ success: false, code: "RATE_LIMIT_EXCEEDED" });
    expect(limited.res.headers.get("Retry-After")).toMatch(/^[1-9]\d*$/);
    expect((await client.ask(forged.toString())).res.status).toBe(401);
    const expiredLink = await linkFor(databaseId, crypto.randomUUID(), READY_AT - 5000, 1);
    expect((await client.ask(expiredLink)).json()).toMatchObject({ code: "SIGNED_URL_EXPIRED" });
    // Polls count per link and address: another link has an allowance of its own, and once that is
    // spent a link to a missing export answers 429 as well, not 404 (the limit decides first).
    const missing = await linkFor(databaseId, crypto.randomUUID());
    expect((await client.ask(missing)).res.status).toBe(404);
    expect((await client.ask(missing)).res.status).toBe(429);
  });
});

describe("download: export states", () => {
  it("answers 503 with the pending envelope and Retry-After while pending, then running", async () => {
    const { databaseId, exportId } = await pendingExport();
    const url = await linkFor(databaseId, exportId);
    const client = downloadClient();
    const pending = await client.ask(url);
    expect(pending.res.status).toBe(503);
    expect(pending.res.headers.get("Retry-After")).toBe(env.PENDING_RETRY_AFTER_SECONDS);
    expect(pending.json()).toEqual({ success: false, error: expect.any(String), code: "export_pending", status: "pending" });
    // The job's claim, written by this isolate (the job's own write forgets the kept record).
    await claimExport(env, { databaseId, exportId }, Date.now(), 1);
    expect((await client.ask(url)).json()).toMatchObject({ code: "export_pending", status: "running" });
  });

  it("shows a change written by another isolate within RECORD_KEEP_MS, and the clock's rules at once", async () => {
    const { databaseId, exportId } = await pendingExport();
    const url = await linkFor(databaseId, exportId, T0, 7 * 86_400);
    const client = downloadClient();
    expect((await client.ask(url)).json()).toMatchObject({ code: "export_pending", status: "pending" });
    // Another isolate (the job, elsewhere) moves the record: this isolate's kept copy still answers...
    await env.DB.prepare("UPDATE exports SET status = 'running' WHERE id = ?").bind(exportId).run();
    expect((await client.ask(url)).json()).toMatchObject({ code: "export_pending", status: "pending" });
    // ...for no longer than RECORD_KEEP_MS of real time.
    await new Promise((resolve) => setTimeout(resolve, RECORD_KEEP_MS + 50));
    expect((await client.ask(url)).json()).toMatchObject({ code: "export_pending", status: "running" });
    // The deadline is the clock's, applied to the kept copy: past it, 404 at once.
    const record = await env.DB.prepare("SELECT deadline_at FROM exports WHERE id = ?").bind(exportId).first<{ deadline_at: number }>();
    client.clock.now = record!.deadline_at;
    expect((await client.ask(url)).json()).toMatchObject({ code: "NOT_FOUND" });
  });

  it("answers 404 identically for a missing export, another database's export and a failed export", async () => {
    const own = await readyExport();
    const other = await readyExport();
    const failed = await pendingExport();
    await deliver(failed.job, 1, { queue: EXPORT_DLQ });
    const client = downloadClient();
    const replies = await Promise.all(
      [
        await linkFor(own.databaseId, crypto.randomUUID()),
        await linkFor(own.databaseId, other.exportId),
        await linkFor(failed.databaseId, failed.exportId),
      ].map((url) => client.ask(url)),
    );
    for (const reply of replies) expect(reply.res.status).toBe(404);
    expect(replies[0]!.json()).toEqual({ success: false, error: expect.any(String), code: "NOT_FOUND" });
    expect(new Set(replies.map((r) => r.text())).size).toBe(1);
  });

  it("answers 410 from the retention clock, before and after the sweep", async () => {
    const { databaseId, exportId } = await readyExport();
    const client = downloadClient(env, READY_AT + RETENTION_MS - 1);
    // A long link: the retention clock, not the link's, decides.
    const longUrl = await linkFor(databaseId, exportId, READY_AT, 2 * RETENTION_MS);
    expect((await client.ask(longUrl)).res.status).toBe(200);
    client.clock.now = READY_AT + RETENTION_MS;
    const expired = await client.ask(longUrl);
    expect(expired.res.status).toBe(410);
    expect(expired.json()).toEqual({ success: false, error: expect.any(String), code: "EXPORT_EXPIRED" });

    await sweepExpiredArchives(env, Number(env.ARCHIVE_RETENTION_SECONDS), READY_AT + RETENTION_MS);
    expect(await env.ARCHIVES.head(archiveKey(databaseId, exportId))).toBeNull();
    expect((await client.ask(longUrl)).res.status).toBe(410);
  });

  it("answers 500 INTERNAL_ERROR when the ready archive's object is gone", async () => {
    const { url, key } = await readyExport();
    await env.ARCHIVES.delete(key);
    const client = downloadClient();
    for (const init of [{}, { method: "HEAD" }, { headers: { Range: "bytes=0-3" } }, { headers: { Range: "bytes=0-1,5-6" } }, { headers: { Range: "bytes=99999-" } }]) {
      const reply = await client.ask(url, init);
      expect(reply.res.status).toBe(500);
      if (init.method !== "HEAD") expect(reply.json()).toEqual({ success: false, error: expect.any(String), code: "INTERNAL_ERROR" });
    }
  });

  it("answers 404, not 500, when another isolate deleted the database after this one kept its ready record", async () => {
    const { url, key, databaseId } = await readyExport();
    const client = downloadClient();
    expect((await client.ask(url)).res.status).toBe(200);
    // As deleteDatabaseAndArchives does in another isolate: the record (and its exports) go, then the archive.
    await env.DB.prepare("DELETE FROM databases WHERE id = ?").bind(databaseId).run();
    await env.ARCHIVES.delete(key);
    const reply = await client.ask(url);
    expect(reply.res.status).toBe(404);
    expect(reply.json()).toEqual({ success: false, error: expect.any(String), code: "NOT_FOUND" });
  });

  it.each([
    ["size", (meta: Record<string, string>) => ({ ...meta, size: String(Number(meta.size) + 1) })],
    ["sha256", (meta: Record<string, string>) => ({ ...meta, sha256: "0".repeat(64) })],
  ])("answers 500 when the object's %s metadata disagrees with the record", async (_name, change) => {
    const { url, key, archive } = await readyExport();
    const object = await env.ARCHIVES.head(key);
    await env.ARCHIVES.put(key, archive, { customMetadata: change(object!.customMetadata!) });
    const reply = await downloadClient().ask(url);
    expect(reply.res.status).toBe(500);
    expect(reply.json()).toMatchObject({ code: "INTERNAL_ERROR" });
  });

  it("answers 500 when the stored object is not the archive the record describes", async () => {
    const { url, key } = await readyExport();
    const object = await env.ARCHIVES.head(key);
    await env.ARCHIVES.put(key, "not the archive", { customMetadata: object!.customMetadata! });
    expect((await downloadClient().ask(url)).res.status).toBe(500);
  });

  it("needs no Authorization header and ignores one", async () => {
    const { url } = await readyExport();
    const reply = await downloadClient().ask(url, { headers: { Authorization: "Bearer nonsense" } });
    expect(reply.res.status).toBe(200);
  });
});

/** The signature with its first character changed to another base64url character. */
function flip(sig: string): string {
  return (sig[0] === "A" ? "B" : "A") + sig.slice(1);
}
