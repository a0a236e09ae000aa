/**
 * Heartbeats of the work that changes an app outside its controller's own call (ARCHITECTURE.md:
 * no promise lives only in memory). A deploy job writes `deploys.runner_alive_at` every
 * RUNNER_BEAT_MS while it works; the controller's alarm looks every RUNNER_CHECK_MS and decides
 * here what a silence means. Pure: the controller does what the verdict says.
 */

/** How often a deploy job writes its heartbeat (at least every 15 s). */
export const RUNNER_BEAT_MS = 10_000;
/** A runner silent this long is dead (its queue consumer was killed, or its message lost). */
export const RUNNER_SILENT_MS = 60_000;
/** How often the controller's alarm looks at a change in flight. */
export const RUNNER_CHECK_MS = 15_000;
/** Times a dead runner's job is handed to a new one before its deploy is failed. */
export const RUNNER_REQUEUES = 1;

/**
 * Where a deploy's runner is, from the deploy's status: `build` (fetching and building, status
 * `building`) or `launch` (starting and probing the new instance, status `starting`); both are safe
 * to run again (a deploy's image is built once per tag; a launch that is not switched changes
 * nothing). `switch`: moving the app to its new instance, not repeated.
 */
export type RunnerStep = "build" | "launch" | "switch";

export type RunnerVerdict = "alive" | "requeue" | "fail";

const REPEATABLE: ReadonlySet<RunnerStep> = new Set(["build", "launch"]);

/**
 * What the alarm does about a runner whose last sign of life was at `lastSignAt`: nothing while
 * it spoke within RUNNER_SILENT_MS; else hand its job to a new runner once, when its step is safe
 * to repeat; else fail the deploy.
 */
export function runnerVerdict(input: { lastSignAt: number; step: RunnerStep; requeues: number; now: number }): RunnerVerdict {
  if (input.now - input.lastSignAt < RUNNER_SILENT_MS) return "alive";
  return REPEATABLE.has(input.step) && input.requeues < RUNNER_REQUEUES ? "requeue" : "fail";
}

/** The step of a running deploy, from its status. */
export function deployStep(status: "building" | "starting"): RunnerStep {
  return status === "building" ? "build" : "launch";
}

const DURING: Record<RunnerStep, string> = { build: "during the build", launch: "while starting the new instance", switch: "while switching traffic" };

/** The sentence in the deploy's log and red panel when its runner died. */
export function runnerDeadMessage(step: RunnerStep): string {
  return `The deploy's runner stopped answering ${DURING[step]}; press Deploy to try again.`;
}
