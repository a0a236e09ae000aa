import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getConfig } from "../../src/config";
import { clockedApp, envWith, recordExportJobs } from "./api-helpers";
import { accountWithToken } from "./helpers";

// SPEC.md Limits, "Call rate": per caller across every endpoint; over it, 429 RATE_LIMIT_EXCEEDED
// with a Retry-After that is exactly when the next call passes (issue 3); IETF draft fields on replies.

let jobs: ReturnType<typeof recordExportJobs>;
beforeEach(() => {
  jobs = recordExportJobs({ deliver: false });
});
afterEach(() => jobs.restore());

// 7 a minute is an emission interval of 8.571 s: a whole-second Retry-After must round it up.
const SLOW = envWith({ RATE_LIMIT_PER_MINUTE: "7", RATE_LIMIT_BURST: "3" });

async function codeOf(res: Response): Promise<string | undefined> {
  return res.status === 200 ? undefined : (await res.json<{ code: string }>()).code;
}

describe("call-rate limit on start export", () => {
  it("refuses the call after the burst with the exact whole-second Retry-After, whatever the route answered", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    // The burst is spent by any reply: a start, then two export_in_flight refusals.
    expect(await codeOf(await app.startExport(token, databaseId, SLOW))).toBeUndefined();
    expect(await codeOf(await app.startExport(token, databaseId, SLOW))).toBe("export_in_flight");
    expect(await codeOf(await app.startExport(token, databaseId, SLOW))).toBe("export_in_flight");

    const limited = await app.startExport(token, databaseId, SLOW);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toBe("9");
    expect(limited.headers.get("RateLimit-Policy")).toBe('"api";q=3;w=26');
    expect(limited.headers.get("RateLimit")).toBe('"api";r=0;t=26');
    expect(await limited.json()).toEqual({ success: false, error: expect.any(String), code: "RATE_LIMIT_EXCEEDED" });

    const start = app.clock.now;
    app.clock.now = start + 8_000; // one second before Retry-After: still refused
    const early = await app.startExport(token, databaseId, SLOW);
    expect(await codeOf(early)).toBe("RATE_LIMIT_EXCEEDED");
    expect(early.headers.get("Retry-After")).toBe("1");

    app.clock.now = start + 9_000; // at Retry-After: passes the limit (and meets the gate again)
    expect(await codeOf(await app.startExport(token, databaseId, SLOW))).toBe("export_in_flight");
  });

  it("sends RateLimit-Policy and RateLimit on passing replies, errors included", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    const ok = await app.startExport(token, databaseId, SLOW);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("RateLimit-Policy")).toBe('"api";q=3;w=26');
    expect(ok.headers.get("RateLimit")).toBe('"api";r=2;t=9');
    const missing = await app.startExport(token, crypto.randomUUID(), SLOW);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("RateLimit")).toBe('"api";r=1;t=18');
  });

  it("counts per account: one account's exhaustion leaves another untouched", async () => {
    const busy = await accountWithToken();
    const other = await accountWithToken();
    const app = clockedApp();
    for (let i = 0; i < 3; i++) await app.startExport(busy.token, busy.databaseId, SLOW);
    expect(await codeOf(await app.startExport(busy.token, busy.databaseId, SLOW))).toBe("RATE_LIMIT_EXCEEDED");
    expect((await app.startExport(other.token, other.databaseId, SLOW)).status).toBe(200);
  });

  it("decides before the database does: over the limit, another account's database and a missing one answer 429, not 404", async () => {
    const { token, databaseId } = await accountWithToken();
    const other = await accountWithToken();
    const app = clockedApp();
    for (let i = 0; i < 3; i++) await app.startExport(token, databaseId, SLOW);
    // The database is read while the limit is checked; the limit's answer comes first all the same.
    expect(await codeOf(await app.startExport(token, other.databaseId, SLOW))).toBe("RATE_LIMIT_EXCEEDED");
    expect(await codeOf(await app.startExport(token, crypto.randomUUID(), SLOW))).toBe("RATE_LIMIT_EXCEEDED");
    app.clock.now += 9_000;
    expect(await codeOf(await app.startExport(token, other.databaseId, SLOW))).toBe("NOT_FOUND");
  });

  it("counts per account across databases and tokens", async () => {
    const { client, token, databaseId } = await accountWithToken();
    const second = await client.json<{ id: string }>("POST", "/console/api/databases", { name: "second" });
    const { token: token2 } = await client.json<{ token: string }>("POST", "/console/api/tokens", { name: "ci-2" });
    const app = clockedApp();
    await app.startExport(token, databaseId, SLOW);
    await app.startExport(token2, second.id, SLOW);
    await app.startExport(token, crypto.randomUUID(), SLOW);
    expect(await codeOf(await app.startExport(token2, databaseId, SLOW))).toBe("RATE_LIMIT_EXCEEDED");
  });

  it("with the default settings, lets the whole burst through and refuses the next call for 1 s", async () => {
    const { RATE_LIMIT_BURST: burst, RATE_LIMIT_PER_MINUTE: perMinute } = getConfig(env);
    const { token } = await accountWithToken();
    const app = clockedApp();
    for (let i = 0; i < burst; i++) {
      const res = await app.startExport(token, crypto.randomUUID());
      expect(res.status, `call ${i + 1}`).toBe(404);
    }
    const limited = await app.startExport(token, crypto.randomUUID());
    expect(limited.status).toBe(429);
    expect(limited.headers.get("Retry-After")).toBe(String(Math.ceil(60 / perMinute)));
    app.clock.now += Math.ceil(60 / perMinute) * 1000;
    expect((await app.startExport(token, crypto.randomUUID())).status).toBe(404);
  });
});
