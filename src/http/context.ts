import type { Config } from "../config";

/** What a test may replace: the clock and id generation. */
export interface Deps {
  now: () => number;
  uuid: () => string;
}

export const defaultDeps: Deps = {
  now: () => Date.now(),
  uuid: () => crypto.randomUUID(),
};

export interface AppVariables {
  requestId: string;
  config: Config;
  deps: Deps;
  /** The caller's account, once a token or session has been checked. */
  accountId?: string;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
