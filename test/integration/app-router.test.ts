import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApiApp, createApp, isApiPath } from "../../src/app";

// Hono's SmartRouter uses its RegExpRouter (one regular expression per method) unless a route set
// cannot be written as one, and then falls back to walking a tree on every request, without a
// word. The console's routes cannot (`/apps/new` beside `/apps/:id`), so `/api/v1/` is answered by
// an app of its own (src/app.ts), which must keep the fast router.

describe("routing of the public API", () => {
  it("the API's own app routes with the RegExpRouter", async () => {
    const api = createApiApp();
    expect((await api.fetch(new Request("http://localhost/api/v1/openapi.json"), env, createExecutionContext())).status).toBe(200);
    expect(api.router.name).toBe("SmartRouter + RegExpRouter");
  });

  it.each([
    ["http://localhost/api/v1/dbs/x/export", true],
    ["https://api.example.com/api/v1/dbs/x/exports/y/download?exp=1&sig=a", true],
    ["http://localhost/api/v1/openapi.json", true],
    ["http://localhost/api/v1", false],
    ["http://localhost/api/v2/dbs", false],
    ["http://localhost/console/api/v1/", false],
    ["http://localhost/docs", false],
    ["http://localhost/healthz?next=/api/v1/", false],
  ])("isApiPath(%s) is %s", (url, expected) => expect(isApiPath(url)).toBe(expected));

  it("the whole app and the API's app answer an API request alike, 404 and 405 included", async () => {
    const whole = createApp();
    const ask = async (url: string, init?: RequestInit) => {
      const res = await whole.fetch(new Request(url, init), env, createExecutionContext());
      return { status: res.status, allow: res.headers.get("Allow"), body: await res.text() };
    };
    expect(await ask("http://localhost/api/v1/no/such/thing")).toMatchObject({ status: 404, body: expect.stringContaining('"code":"NOT_FOUND"') });
    expect(await ask(`http://localhost/api/v1/dbs/${crypto.randomUUID()}/export`, { method: "GET" })).toMatchObject({ status: 405, allow: "POST" });
    expect(await ask(`http://localhost/api/v1/dbs/${crypto.randomUUID()}/export`, { method: "POST" })).toMatchObject({ status: 401 });
    expect((await ask("http://localhost/docs")).status).toBe(200);
  });
});
