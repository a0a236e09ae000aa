import type { Context, MiddlewareHandler } from "hono";
import type { AppRow } from "../../apps/store";
import type { AppEnv } from "../../http/context";
import { ownedApp } from "../actions/apps";
import { callerOf } from "../actions/caller";

// Keyed by the request's context, which stays the same from middleware to handler (the request
// object itself may be replaced on the way: jsonBodyFirst gives a JSON body its JSON type).
const reads = new WeakMap<Context<AppEnv>, Promise<AppRow>>();

/** The app named by the path's `{id}`, read once per request (another account's answers 404 like a missing one). */
export function requestedApp(c: Context<AppEnv>): Promise<AppRow> {
  let read = reads.get(c);
  if (!read) {
    read = ownedApp(callerOf(c), c.req.param("id")!);
    reads.set(c, read);
  }
  return read;
}

/**
 * Route middleware of an operation whose app must be the caller's before its body is read: the
 * 404 answers first, ahead of the body's validator, as it always has for these operations.
 */
export const appFirst: MiddlewareHandler<AppEnv> = async function appFirst(c, next) {
  await requestedApp(c);
  await next();
};
