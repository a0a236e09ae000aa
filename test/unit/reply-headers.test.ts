import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { setReplyHeaders } from "../../src/http/reply-headers";

/** An app whose outer middleware adds a header to whatever the route answered, remembering what that was. */
function appAnswering(make: () => Response) {
  const made: Response[] = [];
  const app = new Hono();
  app.use(async (c, next) => {
    await next();
    setReplyHeaders(c, { "X-Request-Id": "r-1", RateLimit: '"default";r=9;t=0' });
  });
  app.get("/", () => {
    const res = make();
    made.push(res);
    return res;
  });
  return { app, made };
}

describe("setReplyHeaders", () => {
  it("adds the headers to a reply the Worker built, in place (no copy of the Response)", async () => {
    const { app, made } = appAnswering(() => new Response('{"ok":true}', { status: 503, headers: { "Retry-After": "2" } }));
    const res = await app.request("/");
    expect(res).toBe(made[0]);
    expect(res.status).toBe(503);
    expect(res.headers.get("X-Request-Id")).toBe("r-1");
    expect(res.headers.get("RateLimit")).toBe('"default";r=9;t=0');
    expect(res.headers.get("Retry-After")).toBe("2");
    expect(await res.text()).toBe('{"ok":true}');
  });

  it("copies a reply whose headers cannot change, keeping its status, headers and body", async () => {
    // A redirect's headers are immutable, as are those of a Response passed through from fetch().
    const { app, made } = appAnswering(() => Response.redirect("https://example.com/next", 302));
    const res = await app.request("/");
    expect(() => made[0]!.headers.set("X-Probe", "1")).toThrow(TypeError);
    expect(res).not.toBe(made[0]);
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("https://example.com/next");
    expect(res.headers.get("X-Request-Id")).toBe("r-1");
    expect(res.headers.get("RateLimit")).toBe('"default";r=9;t=0');
  });
});
