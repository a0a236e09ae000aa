import type { Context, MiddlewareHandler } from "hono";
import type { AppRow } from "../../apps/store";
import type { AppEnv } from "../../http/context";
import { perRequest } from "../../http/per-request";
import { ownedApp } from "../actions/apps";
import { callerOf } from "../actions/caller";

/** The app named by the path's `{id}`, read once per request (another account's answers 404 like a missing one). */
const owned = perRequest((c) => ownedApp(callerOf(c), c.req.param("id")!));

/**
 * Route middleware of an operation whose app must be the caller's before its body is read: the
 * 404 answers first, ahead of the body's validator, as it always has for these operations.
 */
export const appFirst: MiddlewareHandler<AppEnv> = async function appFirst(c, next) {
  await owned.get(c);
  await next();
};

/** The request's app (read by `appFirst`, or now). */
export const requestedApp = (c: Context<AppEnv>): Promise<AppRow> => owned.get(c);
