import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";

/**
 * A read made at most once per request, however many ask for it. `ahead()` is middleware that
 * starts it early, so its round trip overlaps the checks that must decide first (the call rate,
 * an address's failures); whoever needs the answer awaits the same promise with `get`. A request
 * refused before that leaves the read unawaited, its failure swallowed.
 */
export function perRequest<T>(read: (c: Context<AppEnv>) => Promise<T>) {
  const reads = new WeakMap<Request, Promise<T>>();
  const get = (c: Context<AppEnv>): Promise<T> => {
    let pending = reads.get(c.req.raw);
    if (!pending) {
      pending = read(c);
      reads.set(c.req.raw, pending);
    }
    return pending;
  };
  const ahead = (): MiddlewareHandler<AppEnv> =>
    async function readAhead(c, next) {
      get(c).catch(() => undefined);
      await next();
    };
  return { get, ahead };
}
