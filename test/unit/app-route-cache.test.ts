import { describe, expect, it } from "vitest";
import { MIN_DRAIN_SECONDS } from "../../src/apps/launch";
import { ROUTE_TTL_MS, RouteCache } from "../../src/routing/route-cache";

// Issue 12, "Serving apps": a running app's route is remembered for less than the old instance
// drains after a switch, so a remembered address still reaches an instance of the app.
describe("RouteCache", () => {
  const a = { appId: "a", instanceId: "c1", instanceUrl: "http://127.0.0.1:32768", engine: "docker:127.0.0.1:2375", node: "127.0.0.1", port: 32768 };
  const b = { appId: "b", instanceId: "c2", instanceUrl: "http://127.0.0.1:32769", engine: null, node: null, port: null };

  it("remembers a route for less time than the old instance drains", () => {
    expect(ROUTE_TTL_MS).toBeLessThan(MIN_DRAIN_SECONDS * 1000);
  });

  it.each<[string, number, boolean]>([
    ["just set", 0, true],
    ["within the TTL", 999, true],
    ["at the TTL", 1000, false],
    ["past the TTL", 5000, false],
  ])("a route read %s (%i ms later) is %s", (_when, later, kept) => {
    const routes = new RouteCache(1000);
    routes.set("web", a, 10_000);
    expect(routes.get("web", 10_000 + later)).toEqual(kept ? a : null);
  });

  it("forgets a route on request, and a new one replaces the old", () => {
    const routes = new RouteCache(1000);
    routes.set("web", a, 0);
    routes.forget("web");
    expect(routes.get("web", 1)).toBeNull();
    routes.set("web", a, 0);
    routes.set("web", b, 0);
    expect(routes.get("web", 1)).toEqual(b);
  });

  it("keeps at most `size` routes, dropping the oldest", () => {
    const routes = new RouteCache(1000, 2);
    routes.set("one", a, 0);
    routes.set("two", a, 0);
    routes.set("three", b, 0);
    expect([routes.get("one", 1), routes.get("two", 1), routes.get("three", 1)]).toEqual([null, a, b]);
  });
});
