import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { uniqueEmail } from "./helpers";
import { PageClient, fieldError, inputValue, signedUpPage } from "./console-pages-helpers";

describe("console pages: accounts", () => {
  it("sends a signed-out visitor to sign in, then back where they were going", async () => {
    const client = new PageClient();
    const res = await client.get("/console/profile");
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/console/signin?next=%2Fconsole%2Fprofile");

    const email = uniqueEmail();
    await signedUpPage(email);
    const signIn = await client.post("/console/signin?next=%2Fconsole%2Fprofile", { email, password: "correct horse battery" });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get("Location")).toBe("/console/profile");
    expect(await client.page("/console/profile")).toContain(email);
  });

  it("never redirects sign-in to another site", async () => {
    const email = uniqueEmail();
    await signedUpPage(email);
    for (const next of ["//evil.example/x", "https://evil.example", "/\\evil.example", "/api/v1/x"]) {
      const res = await new PageClient().post(`/console/signin?next=${encodeURIComponent(next)}`, { email, password: "correct horse battery" });
      expect(res.headers.get("Location")).toBe("/console/databases");
    }
  });

  it("shows sign-up errors next to the field that caused them and keeps the email", async () => {
    const client = new PageClient();
    const bad = await client.post("/console/signup", { email: "not-an-email", password: "short" });
    expect(bad.status).toBe(400);
    const html = await bad.text();
    expect(fieldError(html, "email")).toBe("Enter a valid email address.");
    expect(fieldError(html, "password")).toBe("Use at least 8 characters for the password.");
    expect(html).toMatch(/id="f-email"[^>]*aria-invalid="true"[^>]*aria-describedby="f-email-error"/);
    expect(inputValue(html, "f-email")).toBe("not-an-email");
    expect(inputValue(html, "f-password")).toBe("");

    const email = uniqueEmail();
    await signedUpPage(email);
    const taken = await client.post("/console/signup", { email, password: "correct horse battery" });
    expect(taken.status).toBe(409);
    expect(fieldError(await taken.text(), "email")).toMatch(/already exists/);
  });

  it("answers a wrong password next to the password field, without a session", async () => {
    const email = uniqueEmail();
    await signedUpPage(email);
    const client = new PageClient();
    const res = await client.post("/console/signin", { email, password: "wrong password!" });
    expect(res.status).toBe(401);
    expect(fieldError(await res.text(), "password")).toBe("The email or password is not right.");
    expect(client.cookies.has("session")).toBe(false);
  });

  it("signs out: a notice on the sign-in page, and every page is refused afterwards", async () => {
    const client = await signedUpPage();
    const out = await client.post("/console/signout", {});
    expect(out.status).toBe(303);
    expect(out.headers.get("Location")).toBe("/console/signin");
    expect(await client.page("/console/signin")).toContain("You have signed out.");
    expect((await client.get("/console/databases")).status).toBe(303);
    expect((await client.get("/console/api/tokens")).status).toBe(401);
  });
});

describe("console pages: security", () => {
  it("sends CSP without inline script, no framing, no referrer and no caching on pages", async () => {
    const client = await signedUpPage();
    const res = await client.get("/console/profile");
    const csp = res.headers.get("Content-Security-Policy")!;
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(res.headers.get("X-Frame-Options")).toBe("DENY");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const html = await res.text();
    expect(html.startsWith("<!doctype html>")).toBe(true);
    // Every script element loads a file; none carries code.
    expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script src="/console/assets/console.js" defer="">', '<script src="/console/assets/passkeys.js" defer="">']);
    expect(html).not.toMatch(/\son[a-z]+=/i);
    expect(html).not.toMatch(/style="/);
  });

  it("serves its own stylesheet, script and icon", async () => {
    const client = new PageClient();
    for (const [path, type] of [
      ["/console/assets/console.css", "text/css"],
      ["/console/assets/console.js", "text/javascript"],
      ["/console/assets/icon.svg", "image/svg+xml"],
    ]) {
      const res = await client.get(path!);
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toContain(type);
    }
  });

  it("refuses a form posted from another site, and one with neither our Origin nor the CSRF field", async () => {
    const client = await signedUpPage();
    const evil = await client.post("/console/databases", { name: "x" }, { Origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect(evil.headers.get("Content-Type")).toContain("text/html");
    expect(await evil.text()).toContain("came from another site");

    // Under Referrer-Policy no-referrer browsers post with `Origin: null`: the form's token decides.
    const html = await client.page("/console/databases");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    for (const origin of ["null", ""]) {
      const bare = await client.post("/console/databases", { name: "x" }, { Origin: origin });
      expect(bare.status).toBe(403);
      const wrong = await client.post("/console/databases", { name: "x", _csrf: csrf.slice(1) }, { Origin: origin });
      expect(wrong.status).toBe(403);
      const withToken = await client.post("/console/databases", { name: "x", _csrf: csrf }, { Origin: origin });
      expect(withToken.status).toBe(303);
    }
    const stranger = await signedUpPage();
    expect((await stranger.post("/console/databases", { name: "x", _csrf: csrf }, { Origin: "null" })).status).toBe(403);
  });

  it("lets the sign-in and sign-up pages send their origin, and nothing to other sites", async () => {
    for (const path of ["/console/signin", "/console/signup"]) {
      expect((await new PageClient().get(path)).headers.get("Referrer-Policy")).toBe("same-origin");
    }
    const anonymous = await new PageClient().post("/console/signup", { email: uniqueEmail(), password: "correct horse battery" }, { Origin: "null" });
    expect(anonymous.status).toBe(403);
  });
});

describe("console pages: API tokens", () => {
  it("shows a new token's secret exactly once, then only its masked prefix", async () => {
    const client = await signedUpPage();
    expect(await client.page("/console/profile")).toContain("No tokens yet");
    const created = await client.post("/console/profile/tokens", { name: "ci-backup" });
    expect(created.status).toBe(303);
    expect(created.headers.get("Location")).toBe("/console/profile");
    // The flash cookie carrying the secret across the redirect is sealed.
    const flash = client.cookies.get("console_flash")!;
    expect(flash).toBeDefined();
    expect(flash).not.toContain("dbx_");

    const first = await client.page("/console/profile");
    const secret = inputValue(first, "new-token-value")!;
    expect(secret).toMatch(/^dbx_[0-9A-Za-z]{36}$/);
    expect(first).toContain("it will not be shown again");
    expect(client.cookies.has("console_flash")).toBe(false);

    const again = await client.page("/console/profile");
    expect(again).not.toContain(secret);
    expect(again).toContain(`${secret.slice(0, 8)}••••••••`);
    expect(again).toMatch(/<td>ci-backup<\/td>/);
    expect(again).toContain(">never<");

    const stored = await env.DB.prepare("SELECT * FROM api_tokens WHERE name = 'ci-backup' AND prefix = ?").bind(secret.slice(0, 8)).first();
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it("keeps the secret, the flash cookie and the session out of every log line", async () => {
    const client = await signedUpPage();
    const lines: string[] = [];
    for (const level of ["log", "warn", "error", "info"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    }
    // The draw that samples success lines: 0 writes every one, so each request's line is read here.
    vi.spyOn(Math, "random").mockReturnValue(0);
    await client.post("/console/profile/tokens", { name: "quiet" });
    const flash = client.cookies.get("console_flash")!;
    const secret = inputValue(await client.page("/console/profile"), "new-token-value")!;
    vi.restoreAllMocks();
    const requests = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === "request");
    expect(requests.map((e) => [e.method, e.route, e.status])).toEqual([
      ["POST", "/console/profile/tokens", 303],
      ["GET", "/console/profile", 200],
    ]);
    for (const hidden of [secret, flash, client.cookies.get("session")!]) {
      for (const line of lines) expect(line).not.toContain(hidden);
    }
  });

  it("shows a bad token name next to the field", async () => {
    const client = await signedUpPage();
    const res = await client.post("/console/profile/tokens", { name: "   " });
    expect(res.status).toBe(400);
    expect(fieldError(await res.text(), "name")).toBe("Give the token a name.");
  });

  it("revokes behind a confirmation naming the token; another account cannot", async () => {
    const client = await signedUpPage();
    await client.post("/console/profile/tokens", { name: "laptop" });
    const list = await client.page("/console/profile");
    const id = /data-token-id="([^"]+)"/.exec(list)![1]!;
    const confirm = await client.page(`/console/profile/tokens/${id}/revoke`);
    expect(confirm).toContain("Revoke “laptop”?");

    const stranger = await signedUpPage();
    expect((await stranger.post(`/console/profile/tokens/${id}/revoke`, {})).status).toBe(404);

    const res = await client.post(`/console/profile/tokens/${id}/revoke`, {});
    expect(res.status).toBe(303);
    const after = await client.page("/console/profile");
    expect(after).toContain("Token “laptop” revoked.");
    expect(after).toContain("No tokens yet");
  });

  it("dates show in the viewer's language with the exact UTC time on hover", async () => {
    const client = await signedUpPage();
    await client.post("/console/profile/tokens", { name: "dated" });
    await client.get("/console/profile");
    const res = await client.get("/console/profile", { "Accept-Language": "de-DE,de;q=0.9,en;q=0.5" });
    const html = await res.text();
    expect(html).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC" data-local="">\d\d\.\d\d\.\d{4}, \d\d:\d\d UTC<\/time>/);
  });
});
