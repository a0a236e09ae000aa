import { generateToken } from "../../src/auth/tokens";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { clockedApp, exportRows, recordExportJobs } from "./api-helpers";
import { accountWithToken } from "./helpers";

// SPEC.md endpoint 1 and Authentication: the token is the only credential; a database of another
// account answers exactly like one that does not exist; no secret reaches a log line.

let jobs: ReturnType<typeof recordExportJobs>;
beforeEach(() => {
  jobs = recordExportJobs({ deliver: false });
});
afterEach(() => jobs.restore());

const envelope = (code: string) => ({ success: false, error: expect.any(String), code });

describe("start export: refused requests", () => {
  it.each([
    ["no Authorization header", null],
    ["a malformed token", "not-a-token"],
    // Prefix, body and checksum all valid, so the lookup itself has to refuse it.
    ["a well-formed token nobody holds", generateToken()],
  ])("answers 401 UNAUTHORIZED for %s", async (_name, token) => {
    const { databaseId } = await accountWithToken();
    const res = await clockedApp().startExport(token, databaseId);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(envelope("UNAUTHORIZED"));
    expect(await exportRows(databaseId)).toEqual([]);
  });

  it("answers 401 at once for a revoked token", async () => {
    const { client, token, databaseId } = await accountWithToken();
    const { tokens } = await client.json<{ tokens: { id: string }[] }>("GET", "/console/api/tokens");
    await client.json("DELETE", `/console/api/tokens/${tokens[0]!.id}`);
    const res = await clockedApp().startExport(token, databaseId);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(envelope("UNAUTHORIZED"));
  });

  it.each(["not-a-uuid", "0b8f1a4e-3c2d-4e5f-8a9b-0c1d2e3f4a5", "0b8f1a4e3c2d4e5f8a9b0c1d2e3f4a5b"])(
    "answers 400 INVALID_REQUEST for the id %s",
    async (id) => {
      const { token } = await accountWithToken();
      const res = await clockedApp().startExport(token, id);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual(envelope("INVALID_REQUEST"));
    },
  );

  it("answers another account's database exactly like a missing one", async () => {
    const mine = await accountWithToken();
    const theirs = await accountWithToken();
    const app = clockedApp();
    const missing = await app.startExport(mine.token, crypto.randomUUID());
    const foreign = await app.startExport(mine.token, theirs.databaseId);
    expect(missing.status).toBe(404);
    expect(foreign.status).toBe(404);
    const body = await missing.text();
    expect(await foreign.text()).toBe(body);
    expect(JSON.parse(body)).toEqual(envelope("NOT_FOUND"));
    expect(await exportRows(theirs.databaseId)).toEqual([]);
    expect(jobs.sent).toEqual([]);
  });

  it.each(["GET", "PUT", "DELETE"])("answers %s with 405 and Allow: POST", async (method) => {
    const { token, databaseId } = await accountWithToken();
    const res = await clockedApp().startExport(token, databaseId, undefined, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("POST");
  });
});

describe("start export: logs", () => {
  it("never writes the token or the link signature to a log line", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    const lines: string[] = [];
    const capture = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
    const spies = (["log", "info", "warn", "error"] as const).map((level) => vi.spyOn(console, level).mockImplementation(capture));
    try {
      const started = await app.startExport(token, databaseId);
      const sig = new URL((await started.json<{ url: string }>()).url).searchParams.get("sig")!;
      await app.startExport(token, databaseId); // export_in_flight
      expect(lines.length).toBeGreaterThanOrEqual(2);
      for (const line of lines) {
        expect(line).not.toContain(token);
        expect(line).not.toContain(sig);
      }
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
});
