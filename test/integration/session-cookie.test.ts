import { exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uniqueEmail } from "./helpers";

// Issue 20, "Also": over https the console's session cookie is `__Host-session` (Secure, Path=/,
// no Domain), and a plain `session` cookie, which an app hostname under the same parent domain
// could plant, is never read there.

const HTTPS = "https://control.test";

function call(method: string, path: string, cookie: string | null, body?: unknown): Promise<Response> {
  return workerExports.default.fetch(
    new Request(HTTPS + path, {
      method,
      headers: { Origin: HTTPS, ...(cookie ? { Cookie: cookie } : {}), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
}

describe("session cookie over https", () => {
  it("is __Host-session, Secure, Path=/, no Domain; only that name signs in", async () => {
    const res = await call("POST", "/console/api/signup", null, { email: uniqueEmail(), password: "correct horse battery" });
    expect(res.status).toBe(200);
    const set = res.headers.get("Set-Cookie")!;
    expect(set).toMatch(/^__Host-session=[A-Za-z0-9_-]{43};/);
    expect(set).toMatch(/; Path=\/(;|$)/);
    expect(set).toMatch(/; Secure(;|$)/);
    expect(set).toMatch(/; HttpOnly(;|$)/);
    expect(set).not.toMatch(/Domain=/i);
    const pair = set.split(";")[0]!;
    const value = pair.slice(pair.indexOf("=") + 1);

    expect((await call("GET", "/console/api/tokens", pair)).status).toBe(200);
    // The same value under the unprefixed name, as a cookie set by another host would arrive.
    expect((await call("GET", "/console/api/tokens", `session=${value}`)).status).toBe(401);

    const out = await call("POST", "/console/api/logout", pair);
    expect(out.status).toBe(200);
    expect(out.headers.get("Set-Cookie")).toMatch(/^__Host-session=; Max-Age=0; .*Path=\/.*Secure/);
    expect((await call("GET", "/console/api/tokens", pair)).status).toBe(401);
  });
});
