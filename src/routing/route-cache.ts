/**
 * Where a running app's hostname leads, remembered for a moment in the isolate so a burst of
 * requests to one app does not read D1 once per request. Only running apps are remembered, for
 * less than the old instance drains after a switch (at least MIN_DRAIN_SECONDS, src/apps/launch.ts), so a remembered address still
 * answers for the instance that served it; an address that no longer answers (Stop, Delete,
 * Restart on a new port) is forgotten by the proxy and read again.
 */
import type { InstancePlace } from "./instance-target";

/** What the proxy needs of a running app: its instance and where it answers. */
export interface Route extends InstancePlace {
  appId: string;
  instanceId: string | null;
}

/** How long a route is used without reading D1 again; below MIN_DRAIN_SECONDS (2 s). */
export const ROUTE_TTL_MS = 1000;
/** Routes kept per isolate; the oldest goes first past this. */
export const ROUTE_CACHE_SIZE = 1000;

export class RouteCache {
  readonly #routes = new Map<string, { route: Route; until: number }>();

  constructor(
    private readonly ttlMs = ROUTE_TTL_MS,
    private readonly size = ROUTE_CACHE_SIZE,
  ) {}

  /** The route remembered for `subdomain`, unless it is older than the TTL at `now`. */
  get(subdomain: string, now: number): Route | null {
    const entry = this.#routes.get(subdomain);
    if (!entry) return null;
    if (now >= entry.until) {
      this.#routes.delete(subdomain);
      return null;
    }
    return entry.route;
  }

  set(subdomain: string, route: Route, now: number): void {
    this.#routes.delete(subdomain);
    this.#routes.set(subdomain, { route, until: now + this.ttlMs });
    while (this.#routes.size > this.size) this.#routes.delete(this.#routes.keys().next().value!);
  }

  forget(subdomain: string): void {
    this.#routes.delete(subdomain);
  }
}
