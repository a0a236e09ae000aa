import { heartbeatDue } from "./runner-watch";
import { type ExportRef, noteRunnerAlive } from "./store";

/**
 * The export job's heartbeat: while a try works it writes its sign of life to the export's record
 * at least every HEARTBEAT_EVERY_MS, inline with the work (no timer: a runner that stops working
 * stops beating, which is the point), so the database's ExportGate can tell a dead runner.
 */

/** Thrown by a beat when the export is no longer in flight (failed by the watch, finished by another try, deleted). */
export class RunnerStopped extends Error {
  constructor() {
    super("the export is no longer in flight; this try stops");
    this.name = "RunnerStopped";
  }
}

/** A beat for a try that claimed `ref` at `claimedAt` (the claim wrote the first sign of life). */
export function heartbeat(env: Env, ref: ExportRef, now: () => number, claimedAt: number): () => Promise<void> {
  let last = claimedAt;
  return async () => {
    const at = now();
    if (!heartbeatDue(last, at)) return;
    last = at;
    if (!(await noteRunnerAlive(env, ref, at))) throw new RunnerStopped();
  };
}
