import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { API_ORIGIN, envWith, recordExportJobs } from "./api-helpers";
import { downloadClient, readyExport } from "./download-helpers";

// Limits strangers cannot turn against an owner: polls of a download link count per link and
// client address (the download's "caller"), never against the allowance of the account that owns
// the database. Whoever holds a leaked link only runs out of their own polls.

let jobs: ReturnType<typeof recordExportJobs>;
beforeEach(() => {
  jobs = recordExportJobs({ deliver: false });
});
afterEach(() => jobs.restore());

const TIGHT = envWith({ RATE_LIMIT_BURST: "2", RATE_LIMIT_PER_MINUTE: "1" });
const STRANGER = { "CF-Connecting-IP": "203.0.113.66" };
const OWNER = { "CF-Connecting-IP": "198.51.100.7" };

describe("download polls", { timeout: 30_000 }, () => {
  it("a stranger polling a leaked link runs out alone: the owner's address and the owner's API still pass", async () => {
    const { url, token, databaseId } = await readyExport();
    const client = downloadClient(TIGHT);
    for (let i = 0; i < 2; i++) expect((await client.ask(url, { headers: STRANGER })).res.status).toBe(200);
    const refused = await client.ask(url, { headers: STRANGER });
    expect(refused.res.status).toBe(429);
    expect(refused.json()).toMatchObject({ success: false, code: "RATE_LIMIT_EXCEEDED" });

    // The same link from the owner's address has an allowance of its own.
    expect((await client.ask(url, { headers: OWNER })).res.status).toBe(200);
    // And the owner's account allowance was never touched: its start calls pass the limit (the
    // export gate may still answer, but never RATE_LIMIT_EXCEEDED).
    for (let i = 0; i < 2; i++) {
      const start = await client.ask(`${API_ORIGIN}/api/v1/dbs/${databaseId}/export`, { method: "POST", headers: { ...OWNER, Authorization: `Bearer ${token}` } });
      expect(start.res.status === 429 ? start.json().code : "passed").not.toBe("RATE_LIMIT_EXCEEDED");
    }
  });
});
