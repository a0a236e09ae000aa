import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { verifyDownloadLink } from "../../src/auth/links";
import { getConfig } from "../../src/config";
import { API_ORIGIN, clockedApp, exportIdOf, exportRows, recordExportJobs, setExportStatus } from "./api-helpers";
import { accountWithToken } from "./helpers";

// SPEC.md endpoint 1, `POST /api/v1/dbs/{id}/export`, against real D1, Durable Objects and queue.

const config = getConfig(env);
const COOLDOWN_MS = config.EXPORT_COOLDOWN_SECONDS * 1000;

let jobs: ReturnType<typeof recordExportJobs>;
beforeEach(() => {
  jobs = recordExportJobs({ deliver: false });
});
afterEach(() => jobs.restore());

async function expectWait(res: Response, code: string, retryAfter: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get("Retry-After")).toBe(String(retryAfter));
  const body = await res.json<Record<string, unknown>>();
  expect(body).toEqual({ success: false, error: expect.any(String), code });
}

describe("start export: accepted", () => {
  it("answers 200 {url, expires_at} with a signed link to the new export, and queues one job", async () => {
    jobs.restore();
    jobs = recordExportJobs({ deliver: true });
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp(Date.UTC(2030, 4, 6, 7, 8, 9, 500));
    const res = await app.startExport(token, databaseId);
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const body = await res.json<{ url: string; expires_at: string }>();
    expect(Object.keys(body).sort()).toEqual(["expires_at", "url"]);

    const exp = Math.floor(app.clock.now / 1000) + config.LINK_TTL_SECONDS;
    const url = new URL(body.url);
    expect(url.origin).toBe(API_ORIGIN);
    expect(url.pathname).toMatch(new RegExp(`^/api/v1/dbs/${databaseId}/exports/[0-9a-f-]{36}/download$`));
    expect([...url.searchParams.keys()]).toEqual(["exp", "sig"]);
    expect(url.searchParams.get("exp")).toBe(String(exp));
    expect(body.expires_at).toBe(new Date(exp * 1000).toISOString());
    const verdict = await verifyDownloadLink(config.LINK_SIGNING_KEYS, {
      path: url.pathname,
      exp: url.searchParams.get("exp"),
      sig: url.searchParams.get("sig"),
      now: app.clock.now,
    });
    expect(verdict).toEqual({ ok: true, exp });

    const exportId = exportIdOf(body.url);
    expect(await exportRows(databaseId)).toEqual([{ id: exportId, status: "pending", created_at: app.clock.now }]);
    expect(jobs.sent).toEqual([{ exportId, databaseId }]);
  });

  it("uses the request's own origin for the link", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    const res = await app.call(
      new Request(`https://exports.example.net/api/v1/dbs/${databaseId}/export`, { method: "POST", headers: { Authorization: `Bearer ${token}` } }),
    );
    expect(new URL((await res.json<{ url: string }>()).url).origin).toBe("https://exports.example.net");
  });

  it("reads no request body and accepts the id in upper case", async () => {
    const { token, databaseId } = await accountWithToken();
    const res = await clockedApp().startExport(token, databaseId.toUpperCase(), undefined, {
      body: "{not json",
      headers: { "Content-Type": "application/json" },
    });
    expect(res.status).toBe(200);
    expect(new URL((await res.json<{ url: string }>()).url).pathname).toContain(`/dbs/${databaseId}/`);
  });
});

describe("start export: one at a time, cooldown", () => {
  it("answers export_in_flight while the export is pending, then while it is running", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    const first = await app.startExport(token, databaseId);
    const exportId = exportIdOf((await first.json<{ url: string }>()).url);

    app.clock.now += 1000;
    await expectWait(await app.startExport(token, databaseId), "export_in_flight", config.IN_FLIGHT_RETRY_AFTER_SECONDS);

    await setExportStatus(exportId, "running");
    app.clock.now += 2 * COOLDOWN_MS; // far past any cooldown: still one at a time
    // Its runner is alive (a silent one would get its job queued again: export-crash.test.ts).
    await env.DB.prepare("UPDATE exports SET runner_alive_at = ? WHERE id = ?").bind(app.clock.now, exportId).run();
    await expectWait(await app.startExport(token, databaseId), "export_in_flight", config.IN_FLIGHT_RETRY_AFTER_SECONDS);

    expect(await exportRows(databaseId)).toHaveLength(1);
    expect(jobs.sent).toHaveLength(1);
  });

  it.each([
    ["right after it finished", 1_000, config.EXPORT_COOLDOWN_SECONDS - 1],
    ["100.2 s in: rounds the 199.8 s left up", 100_200, config.EXPORT_COOLDOWN_SECONDS - 100],
    ["1 ms before the window ends: at least 1", COOLDOWN_MS - 1, 1],
  ])("answers cooldown_active %s", async (_name, offsetMs, retryAfter) => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    const started = app.clock.now;
    const exportId = exportIdOf((await (await app.startExport(token, databaseId)).json<{ url: string }>()).url);
    await setExportStatus(exportId, "ready");
    app.clock.now = started + offsetMs;
    await expectWait(await app.startExport(token, databaseId), "cooldown_active", retryAfter);
    expect(await exportRows(databaseId)).toHaveLength(1);
  });

  it("ends the cooldown exactly at the window boundary", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    const started = app.clock.now;
    const exportId = exportIdOf((await (await app.startExport(token, databaseId)).json<{ url: string }>()).url);
    await setExportStatus(exportId, "ready");
    app.clock.now = started + COOLDOWN_MS;
    expect((await app.startExport(token, databaseId)).status).toBe(200);
    expect((await exportRows(databaseId)).map((r) => r.created_at)).toEqual([started, started + COOLDOWN_MS]);
  });

  it("counts the cooldown from an expired export's start too", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    const exportId = exportIdOf((await (await app.startExport(token, databaseId)).json<{ url: string }>()).url);
    await setExportStatus(exportId, "expired");
    app.clock.now += 10_000;
    await expectWait(await app.startExport(token, databaseId), "cooldown_active", config.EXPORT_COOLDOWN_SECONDS - 10);
  });

  it("lets a new export start at once after a failed one, with no cooldown from it", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    const failed = exportIdOf((await (await app.startExport(token, databaseId)).json<{ url: string }>()).url);
    await setExportStatus(failed, "failed");
    app.clock.now += 1;
    const res = await app.startExport(token, databaseId);
    expect(res.status).toBe(200);
    const fresh = exportIdOf((await res.json<{ url: string }>()).url);
    expect(fresh).not.toBe(failed);
    expect(await exportRows(databaseId)).toEqual([
      expect.objectContaining({ id: failed, status: "failed" }),
      expect.objectContaining({ id: fresh, status: "pending" }),
    ]);
    expect(jobs.sent.map((m) => m.exportId)).toEqual([failed, fresh]);
  });

  it("leaves nothing behind when the queue send fails, so the next start succeeds at once", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    jobs.restore();
    jobs = recordExportJobs({ deliver: false, fail: true });
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await app.startExport(token, databaseId);
    errors.mockRestore();
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ success: false, error: expect.any(String), code: "INTERNAL_ERROR" });
    expect(await exportRows(databaseId)).toEqual([]);

    jobs.restore();
    jobs = recordExportJobs({ deliver: false });
    expect((await app.startExport(token, databaseId)).status).toBe(200);
    expect(await exportRows(databaseId)).toHaveLength(1);
    expect(jobs.sent).toHaveLength(1);
  });
});
