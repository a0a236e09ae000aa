import type { Context } from "hono";
import type { Config } from "../../config";
import type { AppEnv, Deps } from "../../http/context";

/**
 * Who asks, and with what: the typed input every app action starts from, the same whether a JSON
 * route or a page form asked. `url` is the request's address (an app's address and its webhook
 * address are shown on the console's own scheme, host and port).
 */
export interface Caller {
  env: Env;
  accountId: string;
  deps: Deps;
  config: Config;
  url: string;
}

/** The signed-in caller of a console request (after the session guard). */
export function callerOf(c: Context<AppEnv>): Caller {
  return { env: c.env, accountId: c.get("accountId")!, deps: c.get("deps"), config: c.get("config"), url: c.req.url };
}
