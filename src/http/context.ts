import type { Config } from "../config";

/** What a test may replace: the clock, id generation and the draw that samples log lines. */
export interface Deps {
  now: () => number;
  uuid: () => string;
  /** Uniform in [0, 1); Math.random when not given. */
  random?: () => number;
}

export const defaultDeps: Deps = {
  now: () => Date.now(),
  uuid: () => crypto.randomUUID(),
  random: () => Math.random(),
};

export interface AppVariables {
  requestId: string;
  config: Config;
  deps: Deps;
  /** The caller's account, once a token or session has been checked. */
  accountId?: string;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };
