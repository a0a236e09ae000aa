import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ConsoleClient, ORIGIN, signedUp, uniqueEmail } from "./helpers";

describe("console accounts", () => {
  it("signs up, sets an HttpOnly SameSite=Lax session cookie, signs out", async () => {
    const client = new ConsoleClient();
    const email = uniqueEmail();
    const res = await client.call("POST", "/console/api/signup", { email, password: "correct horse battery" });
    expect(res.status).toBe(200);
    const cookie = res.headers.get("Set-Cookie")!;
    expect(cookie).toMatch(/^session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/); // http origin in tests
    expect((await client.call("GET", "/console/api/tokens")).status).toBe(200);

    const out = await client.call("POST", "/console/api/logout");
    expect(out.status).toBe(200);
    expect((await client.call("GET", "/console/api/tokens")).status).toBe(401);
  });

  it("stores a salted PBKDF2 hash, never the password", async () => {
    const email = uniqueEmail();
    await new ConsoleClient().json("POST", "/console/api/signup", { email, password: "correct horse battery" });
    const row = await env.DB.prepare("SELECT password_hash FROM accounts WHERE email = ?").bind(email).first<{ password_hash: string }>();
    expect(row!.password_hash).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(row!.password_hash).not.toContain("correct horse");
  });

  it("signs in again with the right password", async () => {
    const email = uniqueEmail();
    await new ConsoleClient().json("POST", "/console/api/signup", { email, password: "correct horse battery" });
    const client = new ConsoleClient();
    const res = await client.call("POST", "/console/api/login", { email: email.toUpperCase(), password: "correct horse battery" });
    expect(res.status).toBe(200);
    expect((await client.call("GET", "/console/api/databases")).status).toBe(200);
  });

  it("answers a wrong password and an unknown email identically", async () => {
    const email = uniqueEmail();
    await new ConsoleClient().json("POST", "/console/api/signup", { email, password: "correct horse battery" });
    const wrong = await new ConsoleClient().call("POST", "/console/api/login", { email, password: "wrong password!" });
    const unknown = await new ConsoleClient().call("POST", "/console/api/login", { email: uniqueEmail(), password: "wrong password!" });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(await wrong.text()).toBe(await unknown.text());
    expect(wrong.headers.get("Set-Cookie")).toBeNull();
  });

  it("refuses a second account with the same email", async () => {
    const email = uniqueEmail();
    await new ConsoleClient().json("POST", "/console/api/signup", { email, password: "correct horse battery" });
    const res = await new ConsoleClient().call("POST", "/console/api/signup", { email, password: "another password" });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ success: false, code: "CONFLICT" });
  });

  it("names the bad field on invalid input", async () => {
    const res = await new ConsoleClient().call("POST", "/console/api/signup", { email: "not-an-email", password: "correct horse battery" });
    expect(res.status).toBe(400);
    const body = await res.json<any>();
    expect(body).toMatchObject({ success: false, code: "INVALID_REQUEST" });
    expect(body.error).toMatch(/^email: /);
    const short = await new ConsoleClient().call("POST", "/console/api/signup", { email: uniqueEmail(), password: "short" });
    expect((await short.json<any>()).error).toMatch(/^password: /);
  });
});

describe("CSRF protection", () => {
  it("refuses a state-changing call from another origin", async () => {
    const client = await signedUp();
    const res = await client.call("POST", "/console/api/tokens", { name: "x" }, { Origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ success: false, code: "CSRF_REJECTED" });
  });

  it("refuses a call with neither Origin nor CSRF token, accepts the session's token", async () => {
    const client = await signedUp();
    const bare = await client.fetcher.fetch(
      new Request(`${ORIGIN}/console/api/tokens`, {
        method: "POST",
        headers: { Cookie: client.cookie, "Content-Type": "application/json" },
        body: JSON.stringify({ name: "x" }),
      }),
    );
    expect(bare.status).toBe(403);
    const row = await env.DB.prepare("SELECT csrf_token FROM sessions ORDER BY created_at DESC LIMIT 1").first<{ csrf_token: string }>();
    const withToken = await client.fetcher.fetch(
      new Request(`${ORIGIN}/console/api/tokens`, {
        method: "POST",
        headers: { Cookie: client.cookie, "Content-Type": "application/json", "X-CSRF-Token": row!.csrf_token },
        body: JSON.stringify({ name: "x" }),
      }),
    );
    expect(withToken.status).toBe(201);
  });

  it("treats Origin: null on a JSON route as the pages do: the session's token decides", async () => {
    const client = await signedUp();
    const row = await env.DB.prepare("SELECT csrf_token FROM sessions ORDER BY created_at DESC LIMIT 1").first<{ csrf_token: string }>();
    const post = (headers: Record<string, string>) => client.call("POST", "/console/api/tokens", { name: "x" }, { Origin: "null", ...headers });
    expect((await post({})).status).toBe(403);
    expect((await post({ "X-CSRF-Token": "wrong" })).status).toBe(403);
    expect((await post({ "X-CSRF-Token": row!.csrf_token })).status).toBe(201);
  });

  it("refuses sign-in posted from another site", async () => {
    const res = await new ConsoleClient().call("POST", "/console/api/login", { email: uniqueEmail(), password: "whatever123" }, { Origin: "https://evil.example" });
    expect(res.status).toBe(403);
  });
});
