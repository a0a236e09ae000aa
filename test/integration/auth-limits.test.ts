import { describe, expect, it } from "vitest";
import { generateToken } from "../../src/auth/tokens";
import { ACCOUNT_FAILURES, ADDRESS_FAILURES, ADDRESS_SIGNUPS } from "../../src/http/auth-limits";
import { clockedApp } from "./api-helpers";
import { ConsoleClient, accountWithToken, uniqueEmail } from "./helpers";

// Issue 16: limits before authentication, per client address (CF-Connecting-IP) and per account.

let address = 0;
/** A client address no other test uses. */
const freshAddress = () => `203.0.113.${++address}-${crypto.randomUUID().slice(0, 8)}`;

describe("limits before authentication", () => {
  it("refuses 40 wrong passwords in a row for one account with 429 at some point, even from many addresses", async () => {
    const email = uniqueEmail();
    await new ConsoleClient().json("POST", "/console/api/signup", { email, password: "correct horse battery" });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await new ConsoleClient().call("POST", "/console/api/login", { email, password: `wrong-password-${i}` }, { "CF-Connecting-IP": freshAddress() });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
        expect(Number(res.headers.get("Retry-After"))).toBeLessThanOrEqual(10);
        expect(await res.json()).toMatchObject({ success: false, code: "RATE_LIMIT_EXCEEDED" });
      }
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses).toContain(429);
  });

  it("limits wrong passwords per address across accounts", async () => {
    const from = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < ADDRESS_FAILURES.burst + 2; i++) {
      const res = await new ConsoleClient().call("POST", "/console/api/login", { email: uniqueEmail(), password: "wrong-password" }, { "CF-Connecting-IP": from });
      statuses.push(res.status);
    }
    expect(statuses.at(-1)).toBe(429);
    const elsewhere = await new ConsoleClient().call("POST", "/console/api/login", { email: uniqueEmail(), password: "wrong-password" }, { "CF-Connecting-IP": freshAddress() });
    expect(elsewhere.status).toBe(401);
  });

  it("lets parallel wrong passwords for one account spend no more than its allowance (each spends before it hashes)", async () => {
    const app = clockedApp();
    const client = new ConsoleClient({ fetch: (req) => app.call(req) });
    const email = uniqueEmail();
    // From an address of its own: this app's clock is years ahead, so it must share no key with tests on the real clock.
    await client.call("POST", "/console/api/signup", { email, password: "correct horse battery" }, { "CF-Connecting-IP": freshAddress() });
    const guesses = Array.from({ length: 30 }, (_, i) =>
      new ConsoleClient({ fetch: (req) => app.call(req) }).call("POST", "/console/api/login", { email, password: `guess-number-${i}` }, { "CF-Connecting-IP": freshAddress() }),
    );
    const statuses = (await Promise.all(guesses)).map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(ACCOUNT_FAILURES.burst);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30 - ACCOUNT_FAILURES.burst);
    // The owner is locked out for one emission interval once the guessing stops, no longer.
    expect((await client.call("POST", "/console/api/login", { email, password: "correct horse battery" }, { "CF-Connecting-IP": freshAddress() })).status).toBe(429);
    app.clock.now += 10_000;
    expect((await client.call("POST", "/console/api/login", { email, password: "correct horse battery" }, { "CF-Connecting-IP": freshAddress() })).status).toBe(200);
  }, 30_000);

  it("gives a successful sign-in its spend back, so the owner's own sign-ins never add up", async () => {
    const app = clockedApp();
    const client = new ConsoleClient({ fetch: (req) => app.call(req) });
    const email = uniqueEmail();
    // From an address of its own: this app's clock is years ahead, so it must share no key with tests on the real clock.
    await client.call("POST", "/console/api/signup", { email, password: "correct horse battery" }, { "CF-Connecting-IP": freshAddress() });
    const from = freshAddress();
    for (let i = 0; i < ACCOUNT_FAILURES.burst + 5; i++) {
      expect((await client.call("POST", "/console/api/login", { email, password: "correct horse battery" }, { "CF-Connecting-IP": from })).status).toBe(200);
    }
  }, 30_000);

  it("counts an IPv6 client by its /64: two addresses in one /64 share the allowance, the next /64 does not", async () => {
    const prefix = `2001:db8:${(++address).toString(16)}:${crypto.getRandomValues(new Uint16Array(1))[0]!.toString(16)}`;
    const statuses: number[] = [];
    for (let i = 0; i < ADDRESS_FAILURES.burst; i++) {
      const res = await new ConsoleClient().call("POST", "/console/api/login", { email: uniqueEmail(), password: "wrong-password" }, { "CF-Connecting-IP": `${prefix}::${i + 1}` });
      statuses.push(res.status);
    }
    expect(statuses).toEqual(Array(ADDRESS_FAILURES.burst).fill(401));
    const sameSlash64 = await new ConsoleClient().call("POST", "/console/api/login", { email: uniqueEmail(), password: "wrong-password" }, { "CF-Connecting-IP": `${prefix}:ffff:ffff:ffff:fffe` });
    expect(sameSlash64.status).toBe(429);
    const nextSlash64 = await new ConsoleClient().call("POST", "/console/api/login", { email: uniqueEmail(), password: "wrong-password" }, { "CF-Connecting-IP": `2001:db8:ffff:${(++address).toString(16)}::1` });
    expect(nextSlash64.status).toBe(401);
  }, 30_000);

  it("limits sign-ups per address", async () => {
    const from = freshAddress();
    const statuses: number[] = [];
    // The pace refills a little while the burst is spent, so a few more may pass.
    for (let i = 0; i < ADDRESS_SIGNUPS.burst + 20 && !statuses.includes(429); i++) {
      const res = await new ConsoleClient().call("POST", "/console/api/signup", { email: uniqueEmail(), password: "correct horse battery" }, { "CF-Connecting-IP": from });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, ADDRESS_SIGNUPS.burst)).toEqual(Array(ADDRESS_SIGNUPS.burst).fill(200));
    expect(statuses.at(-1)).toBe(429);
  }, 60_000);

  it("limits start calls with a missing or wrong token per address, deciding before a token lookup's answer is used; a good token is not counted", async () => {
    const { token, databaseId } = await accountWithToken();
    const app = clockedApp();
    const from = freshAddress();
    const start = (t: string | null) => app.startExport(t, databaseId, undefined, { headers: { "CF-Connecting-IP": from } });
    for (let i = 0; i < ADDRESS_FAILURES.burst; i++) expect((await start(i % 2 ? null : generateToken())).status).toBe(401);
    const refused = await start(generateToken());
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ code: "RATE_LIMIT_EXCEEDED" });
    expect(refused.headers.get("Retry-After")).toMatch(/^[1-9]\d*$/);
    // Even the right token waits: the check decides before the lookup's answer is used.
    expect((await start(token)).status).toBe(429);
    app.clock.now += 60_000;
    expect((await start(token)).status).toBe(200);
  });
});

