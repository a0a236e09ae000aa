import type { AppRow } from "../apps/store";
import { appEvent, settleIncident } from "./raise";
import { crashStep, errorsHigh, memoryStep } from "./rules";
import { openIncidents } from "./store";

/**
 * The alerts the metrics object raises from its 15-second samples of the serving instance
 * (src/metrics/app-metrics.ts): app.crashed (the engine restarted the process, or gave up on it),
 * app.memory_high and app.errors_high (rules.ts). What carries from one sample to the next is
 * kept in the object's storage as a WatchState; the incidents themselves are in D1, read only
 * while a condition holds or an incident is open.
 */

export interface WatchState {
  instanceId: string | null;
  restarts: number | null;
  lastCrashAt: number | null;
  memorySince: number | null;
  /** Some incident of these kinds was left open by the last sample. */
  open: boolean;
}

export const NO_WATCH: WatchState = { instanceId: null, restarts: null, lastCrashAt: null, memorySince: null, open: false };

export interface InstanceLook {
  now: number;
  instanceId: string;
  state: "running" | "restarting" | "crashed";
  restarts: number;
  exitCode: number | null;
  oomKilled: boolean;
  memoryBytes: number | null;
  memoryLimitBytes: number;
  /** The app's minute rows of the last 5 minutes: requests and 5xx answers. */
  minutes: { at: number; total: number; errors: number }[];
}

/** One sample's alerts; the state for the next sample. */
export async function watchSample(env: Env, app: AppRow, previous: WatchState, look: InstanceLook): Promise<WatchState> {
  const same = previous.instanceId === look.instanceId;
  const crash = crashStep(same ? previous.lastCrashAt : null, { state: look.state, restarts: look.restarts, previousRestarts: same ? previous.restarts : null, now: look.now });
  const memory = memoryStep(same ? previous.memorySince : null, { memoryBytes: look.memoryBytes, limitBytes: look.memoryLimitBytes, now: look.now });
  const errors = errorsHigh(look.minutes, Math.floor(look.now / 1000));
  const next: WatchState = { instanceId: look.instanceId, restarts: look.restarts, lastCrashAt: crash.lastCrashAt, memorySince: memory.since, open: crash.holds || memory.holds || errors };
  if (!next.open && !previous.open) return next;
  const open = await openIncidents(env, app.id);
  const at = look.now;
  await settleIncident(env, { subject: app.id, kind: "crashed", holds: crash.holds, now: at, open }, { opened: (key) => appEvent(app, "app.crashed", key, at, crashDetails(look)) });
  await settleIncident(env, { subject: app.id, kind: "memory_high", holds: memory.holds, now: at, open }, {
    opened: (key) => appEvent(app, "app.memory_high", key, at, { memory_bytes: look.memoryBytes, memory_limit_bytes: look.memoryLimitBytes, message: "Memory has been above 90 % of the plan's limit for 5 minutes." }),
  });
  await settleIncident(env, { subject: app.id, kind: "errors_high", holds: errors, now: at, open }, {
    opened: (key) => appEvent(app, "app.errors_high", key, at, { ...errorCounts(look), message: "More than 5 % of the last 5 minutes' requests were answered 5xx." }),
  });
  return next;
}

function crashDetails(look: InstanceLook) {
  const why = look.oomKilled ? "it ran out of memory" : look.exitCode !== null ? `it exited with code ${look.exitCode}` : "its process exited";
  const after = look.state === "crashed" ? "the engine gave up restarting it" : "the engine restarted it";
  return { instance_state: look.state, restarts: look.restarts, exit_code: look.exitCode, oom_killed: look.oomKilled, message: `The instance crashed (${why}); ${after}.` };
}

function errorCounts(look: InstanceLook) {
  const from = Math.floor(look.now / 60_000) * 60 - 4 * 60;
  const window = look.minutes.filter((m) => m.at >= from);
  return { requests: window.reduce((n, m) => n + m.total, 0), errors_5xx: window.reduce((n, m) => n + m.errors, 0) };
}
