import { createExecutionContext } from "cloudflare:test";
import { env, exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { ORIGIN, signedUp } from "./helpers";

const fetchWorker = (path: string, init?: RequestInit) => workerExports.default.fetch(new Request(ORIGIN + path, init));

describe("error envelope", () => {
  it("400 INVALID_REQUEST names the field; a non-JSON body is refused the same way", async () => {
    const client = await signedUp();
    const res = await client.call("POST", "/console/api/databases", { name: 42 });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: expect.stringMatching(/^name: /) });
    const garbage = await client.call("POST", "/console/api/databases", undefined, { "Content-Type": "application/json" });
    expect(await garbage.json()).toEqual({ success: false, code: "INVALID_REQUEST", error: "The body must be a JSON object." });
  });

  it("404 NOT_FOUND for an unknown route, with a request id", async () => {
    const res = await fetchWorker("/no/such/place");
    expect(res.status).toBe(404);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(res.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(await res.json()).toEqual({ success: false, code: "NOT_FOUND", error: expect.any(String) });
  });

  it("405 METHOD_NOT_ALLOWED with Allow for a known route and the wrong method", async () => {
    const res = await fetchWorker("/console/api/signup", { method: "GET" });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toBe("POST");
    expect(await res.json()).toEqual({ success: false, code: "METHOD_NOT_ALLOWED", error: expect.any(String) });
  });

  it("405 for every registered route and a method it lacks: the guard is derived from the routes", async () => {
    const client = await signedUp();
    const byPath = new Map<string, Set<string>>();
    for (const route of createApp().routes) {
      if (route.method === "ALL") continue;
      byPath.set(route.path, (byPath.get(route.path) ?? new Set()).add(route.method));
    }
    expect(byPath.size).toBeGreaterThan(15);
    for (const [path, methods] of byPath) {
      const other = ["PUT", "PATCH", "DELETE", "POST"].find((m) => !methods.has(m))!;
      const concrete = path.replace(/:[a-z]+/g, crypto.randomUUID()).replace("*", "x");
      const res = await client.call(other, concrete);
      expect(res.status, `${other} ${path}`).toBe(405);
      expect(res.headers.get("Allow")!.split(", "), path).toEqual(expect.arrayContaining([...methods]));
    }
  });

  it("500 INTERNAL_ERROR without internals when something unexpected fails", async () => {
    const app = createApp();
    const broken = { ...env, LINK_TTL_SECONDS: "not-a-number" } as Env;
    const res = await app.fetch(new Request(`${ORIGIN}/healthz`), broken, createExecutionContext());
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ success: false, code: "INTERNAL_ERROR", error: expect.any(String) });
    expect(body).not.toMatch(/LINK_TTL|stack|Error:/);
    expect(res.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
