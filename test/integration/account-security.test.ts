import { Secret, TOTP } from "otpauth";
import { describe, expect, it, vi } from "vitest";
import { clockedApp } from "./api-helpers";
import { ConsoleClient, uniqueEmail } from "./helpers";

// Each sign-in hashes a password at the Workers maximum of PBKDF2 iterations; these tests make many.
vi.setConfig({ testTimeout: 30_000 });

// Two-step sign-in, sessions and password changes, on a clock the test moves.

const PASSWORD = "correct horse battery";
const START = Date.UTC(2030, 0, 1, 12, 0, 10);

function setup() {
  const app = clockedApp(START);
  const fetcher = { fetch: (req: Request) => app.call(req) };
  const client = (userAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36") => {
    const c = new ConsoleClient(fetcher);
    const call = c.call.bind(c);
    c.call = (method, path, body, headers = {}) => call(method, path, body, { "User-Agent": userAgent, "CF-Connecting-IP": `2001:db8:5ec:${Math.floor(Math.random() * 0xffff).toString(16)}::1`, ...headers });
    return c;
  };
  return { app, client };
}

/** An authenticator app for the secret the setup route gave. */
function authenticator(secret: string) {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: "SHA1" });
  return (at: number) => totp.generate({ timestamp: at });
}

async function accountWithTotp() {
  const { app, client } = setup();
  const email = uniqueEmail();
  const owner = client();
  await owner.json("POST", "/console/api/signup", { email, password: PASSWORD });
  const started = await owner.json<{ secret: string; otpauth_url: string }>("POST", "/console/api/totp/setup");
  expect(started.otpauth_url).toMatch(/^otpauth:\/\/totp\/.+\?.*secret=/);
  expect(started.otpauth_url).toContain(`secret=${started.secret}`);
  const code = authenticator(started.secret);
  const wrong = await owner.call("POST", "/console/api/totp/enable", { code: code(START) === "000000" ? "111111" : "000000" });
  expect(wrong.status).toBe(400);
  expect((await wrong.json()) as object).toMatchObject({ code: "INVALID_REQUEST", error: expect.stringMatching(/^code: /) });
  const enabled = await owner.json<{ recovery_codes: string[] }>("POST", "/console/api/totp/enable", { code: code(app.clock.now) });
  return { app, client, email, owner, code, recovery: enabled.recovery_codes };
}

const login = (c: ConsoleClient, body: object) => c.call("POST", "/console/api/login", body);

describe("two-step sign-in (TOTP)", () => {
  it("asks for a code after the password, accepts each code once, and only within a step of now", async () => {
    const { app, client, email, code } = await accountWithTotp();
    const noCode = await login(client(), { email, password: PASSWORD });
    expect(noCode.status).toBe(401);
    expect(await noCode.json()).toMatchObject({ success: false, code: "TOTP_REQUIRED" });
    // The code that enabled it was used already (same step).
    expect((await login(client(), { email, password: PASSWORD, code: code(app.clock.now) })).status).toBe(401);

    app.clock.now += 30_000;
    const now = code(app.clock.now);
    expect((await login(client(), { email, password: PASSWORD, code: now })).status).toBe(200);
    const replay = await login(client(), { email, password: PASSWORD, code: now });
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ code: "UNAUTHORIZED" });
    // A wrong password with the next code is the same answer as any wrong password.
    expect(await (await login(client(), { email, password: "not the password", code: code(app.clock.now + 30_000) })).json()).toMatchObject({ code: "UNAUTHORIZED" });

    // The next step's code (a phone whose clock runs ahead) is accepted; then the older one is not.
    app.clock.now += 30_000;
    expect((await login(client(), { email, password: PASSWORD, code: code(app.clock.now + 30_000) })).status).toBe(200);
    expect((await login(client(), { email, password: PASSWORD, code: code(app.clock.now) })).status).toBe(401);

    // Two steps away is outside the window either way.
    app.clock.now += 120_000;
    expect((await login(client(), { email, password: PASSWORD, code: code(app.clock.now - 60_000) })).status).toBe(401);
    expect((await login(client(), { email, password: PASSWORD, code: code(app.clock.now + 60_000) })).status).toBe(401);
    expect((await login(client(), { email, password: PASSWORD, code: code(app.clock.now - 30_000) })).status).toBe(200);
  });

  it("takes each of ten recovery codes once, however it is typed", async () => {
    const { client, email, recovery } = await accountWithTotp();
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    for (const r of recovery) expect(r).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
    expect((await login(client(), { email, password: PASSWORD, code: recovery[0] })).status).toBe(200);
    expect((await login(client(), { email, password: PASSWORD, code: recovery[0] })).status).toBe(401);
    expect((await login(client(), { email, password: PASSWORD, code: recovery[1]!.toUpperCase().replaceAll("-", " ") })).status).toBe(200);
    expect((await login(client(), { email, password: PASSWORD, code: recovery[1] })).status).toBe(401);
  });

  it("counts wrong codes against the sign-in limit", async () => {
    const { app, client, email, code } = await accountWithTotp();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await login(client(), { email, password: PASSWORD, code: String(100000 + i) })).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual([429, 429]);
    // Even the right code (the next step's: this step's enabled it) waits now.
    expect((await login(client(), { email, password: PASSWORD, code: code(app.clock.now + 30_000) })).status).toBe(429);
  });

  it("turns off only with a right code; set-up is refused while it is on", async () => {
    const { app, email, owner, code, client } = await accountWithTotp();
    expect(await (await owner.call("POST", "/console/api/totp/setup")).json()).toMatchObject({ code: "CONFLICT" });
    expect((await owner.call("POST", "/console/api/totp/disable", { code: "123456" })).status).toBe(400);
    expect((await owner.call("POST", "/console/api/totp/disable", {})).status).toBe(400);
    app.clock.now += 30_000;
    expect((await owner.call("POST", "/console/api/totp/disable", { code: code(app.clock.now) })).status).toBe(200);
    expect((await login(client(), { email, password: PASSWORD })).status).toBe(200);
  });
});

describe("sessions", () => {
  it("lists each session with when, where and what; ends one at once; signs out everywhere else", async () => {
    const { app, client } = setup();
    const email = uniqueEmail();
    const first = client("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15");
    await first.json("POST", "/console/api/signup", { email, password: PASSWORD });
    app.clock.now += 60_000;
    const second = client();
    expect((await second.call("POST", "/console/api/login", { email, password: PASSWORD }, { "CF-Connecting-IP": "2001:db8::7" })).status).toBe(200);
    const third = client();
    await third.json("POST", "/console/api/login", { email, password: PASSWORD });

    const { sessions } = await second.json<{ sessions: any[] }>("GET", "/console/api/sessions");
    expect(sessions).toHaveLength(3);
    const mine = sessions.find((s) => s.current)!;
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
    expect(mine).toMatchObject({ address: "2001:db8::7", user_agent: expect.stringContaining("Chrome/131"), created_at: new Date(START + 60_000).toISOString() });
    const macSession = sessions.find((s) => s.user_agent.includes("Macintosh"))!;
    expect(macSession.created_at).toBe(new Date(START).toISOString());

    // Last seen moves when the session is used.
    app.clock.now += 5 * 60_000;
    await first.json("GET", "/console/api/tokens");
    const later = (await second.json<{ sessions: any[] }>("GET", "/console/api/sessions")).sessions;
    expect(later.find((s) => s.id === macSession.id).last_seen_at).toBe(new Date(app.clock.now).toISOString());

    // Ending one: the very next request with its cookie is signed out.
    expect((await second.call("DELETE", `/console/api/sessions/${macSession.id}`)).status).toBe(200);
    expect((await first.call("GET", "/console/api/tokens")).status).toBe(401);
    expect((await second.call("DELETE", `/console/api/sessions/${macSession.id}`)).status).toBe(404);

    // Everywhere else: the third ends, the second stays.
    expect(await second.json("POST", "/console/api/sessions/revoke-others")).toMatchObject({ ended: 1 });
    expect((await third.call("GET", "/console/api/tokens")).status).toBe(401);
    expect((await second.call("GET", "/console/api/tokens")).status).toBe(200);
    expect((await second.json<{ sessions: any[] }>("GET", "/console/api/sessions")).sessions.map((s) => s.id)).toEqual([mine.id]);
  });

  it("does not end another account's session", async () => {
    const { client } = setup();
    const a = client();
    await a.json("POST", "/console/api/signup", { email: uniqueEmail(), password: PASSWORD });
    const b = client();
    await b.json("POST", "/console/api/signup", { email: uniqueEmail(), password: PASSWORD });
    const theirs = (await b.json<{ sessions: any[] }>("GET", "/console/api/sessions")).sessions[0].id;
    expect((await a.call("DELETE", `/console/api/sessions/${theirs}`)).status).toBe(404);
    expect((await b.call("GET", "/console/api/tokens")).status).toBe(200);
  });
});

describe("password change", () => {
  it("needs the current password, refuses a common one, and ends every other session", async () => {
    const { client } = setup();
    const email = uniqueEmail();
    const here = client();
    await here.json("POST", "/console/api/signup", { email, password: PASSWORD });
    const elsewhere = client();
    await elsewhere.json("POST", "/console/api/login", { email, password: PASSWORD });

    const wrong = await here.call("POST", "/console/api/password", { current_password: "not it at all", new_password: "a brand new passphrase" });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toMatch(/^current_password: /);
    const common = await here.call("POST", "/console/api/password", { current_password: PASSWORD, new_password: "password123" });
    expect(common.status).toBe(400);
    expect(((await common.json()) as { error: string }).error).toMatch(/^new_password: .*10,000 most common/);
    expect((await here.call("POST", "/console/api/password", { current_password: PASSWORD, new_password: "short" })).status).toBe(400);

    expect(await here.json("POST", "/console/api/password", { current_password: PASSWORD, new_password: "a brand new passphrase" })).toEqual({ success: true, ended_sessions: 1 });
    expect((await elsewhere.call("GET", "/console/api/tokens")).status).toBe(401);
    expect((await here.call("GET", "/console/api/tokens")).status).toBe(200);
    expect((await login(client(), { email, password: PASSWORD })).status).toBe(401);
    expect((await login(client(), { email, password: "a brand new passphrase" })).status).toBe(200);
  });

  it("refuses a common password at sign-up, whatever its case", async () => {
    const { client } = setup();
    for (const password of ["password123", "IloveYou", "qwertyuiop"]) {
      const res = await client().call("POST", "/console/api/signup", { email: uniqueEmail(), password });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^password: .*10,000 most common/);
    }
  });

  it("needs a session for every route here", async () => {
    const { client } = setup();
    for (const [method, path] of [
      ["GET", "/console/api/sessions"],
      ["POST", "/console/api/sessions/revoke-others"],
      ["DELETE", "/console/api/sessions/abc"],
      ["POST", "/console/api/password"],
      ["POST", "/console/api/totp/setup"],
      ["POST", "/console/api/totp/enable"],
      ["POST", "/console/api/totp/disable"],
    ] as const) {
      expect((await client().call(method, path, method === "GET" || method === "DELETE" ? undefined : {})).status, path).toBe(401);
    }
  });
});

describe("the pages", () => {
  /** Posts a form as a browser would (same-origin, urlencoded), keeping the client's cookie. */
  async function post(c: ConsoleClient, path: string, fields: Record<string, string>): Promise<Response> {
    const res = await c.fetcher.fetch(
      new Request(`http://control.test${path}`, {
        method: "POST",
        headers: { Origin: "http://control.test", "Content-Type": "application/x-www-form-urlencoded", ...(c.cookie ? { Cookie: c.cookie } : {}) },
        body: new URLSearchParams(fields),
        redirect: "manual",
      }),
    );
    // Keep every cookie set (the session's, and the flash a redirect's page shows), by name.
    const jar = new Map(c.cookie.split("; ").filter(Boolean).map((pair) => [pair.split("=")[0]!, pair] as const));
    for (const set of res.headers.getSetCookie()) jar.set(set.split("=")[0]!, set.split(";")[0]!);
    c.cookie = [...jar.values()].join("; ");
    return res;
  }

  it("the sign-in page asks for a code when one is due, and signs in with it", async () => {
    const { app, client, email, code } = await accountWithTotp();
    const browser = client();
    const first = await post(browser, "/console/signin", { email, password: PASSWORD });
    expect(first.status).toBe(401);
    const html = await first.text();
    expect(html).toContain('name="code"');
    expect(html).toContain("6-digit code from your authenticator app");
    const wrong = await post(browser, "/console/signin", { email, password: PASSWORD, code: "12345" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("That code is not right");
    const signedIn = await post(browser, "/console/signin", { email, password: PASSWORD, code: code(app.clock.now + 30_000) });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("Location")).toBe("/console/databases");
  });

  it("the profile shows two-step sign-in, the password form and the sessions; setting up shows a QR code as SVG", async () => {
    const { client } = setup();
    const owner = client();
    await owner.json("POST", "/console/api/signup", { email: uniqueEmail(), password: PASSWORD });
    const profile = await (await owner.call("GET", "/console/profile")).text();
    expect(profile).toContain("Set up two-step sign-in");
    expect(profile).toContain('name="current_password"');
    expect(profile).toContain("This session");
    expect(profile).toContain("Chrome 131 on Linux");

    const started = await post(owner, "/console/profile/totp/setup", {});
    expect(started.status).toBe(303);
    expect(started.headers.get("Location")).toBe("/console/profile/totp/setup");
    const page = await (await owner.call("GET", "/console/profile/totp/setup")).text();
    expect(page).toMatch(/<div role="img" aria-label="QR code[^"]*"><svg width="240" height="240"/);
    expect(page).toMatch(/<code id="totp-secret">[A-Z2-7]{32}<\/code>/);
  });

  it("a refused password change names the field; a done one says how many sessions it signed out", async () => {
    const { client } = setup();
    const email = uniqueEmail();
    const owner = client();
    await owner.json("POST", "/console/api/signup", { email, password: PASSWORD });
    await client().json("POST", "/console/api/login", { email, password: PASSWORD });
    const refused = await post(owner, "/console/profile/password", { current_password: PASSWORD, new_password: "iloveyou" });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/id="f-new_password-error">This password is among the 10,000 most common/);
    const done = await post(owner, "/console/profile/password", { current_password: PASSWORD, new_password: "a long and fresh passphrase" });
    expect(done.status).toBe(303);
    const profile = await (await owner.call("GET", "/console/profile")).text();
    expect(profile).toContain("Your password was changed, and 1 other session signed out.");
  });
});
