import type { ExportStatus } from "../db/schema";
import { IN_FLIGHT, isOverdue } from "./export-state";

/**
 * Watching an export's runner (the queue consumer working on it), so that an export whose runner
 * died (the consumer killed, the local queue lost with its messages, the whole service restarted)
 * neither answers 503 nor holds its database `export_in_flight` until its deadline, which is long
 * enough for many 15-minute tries. Pure: the database's ExportGate reads the record, asks, and
 * does what the verdict says from its alarm (and at every start of an export of the database).
 */

/** A runner silent this long is taken for dead. */
export const RUNNER_SILENCE_MS = 60_000;
/** A working runner writes its heartbeat this often at least: a few beats fit in the silence. */
export const HEARTBEAT_EVERY_MS = 10_000;
/** Times a silent export's job is queued again (going on from its last checkpoint) before it fails; a checkpoint starts the count over. */
export const MAX_REVIVALS = 1;

/** The fields of an export record the watch reads. */
export interface WatchedExport {
  status: ExportStatus;
  createdAt: number;
  deadlineAt: number;
  /** The runner's last sign of life (Unix ms); null on records older than the column. */
  runnerAliveAt: number | null;
  /** Times the job was queued again since the last checkpoint. */
  revivals: number;
}

export type RunnerVerdict =
  /** Nothing to watch: the export is no longer in flight. */
  | { action: "none" }
  /** The runner is alive (or a try is due): look again at `checkAt`. */
  | { action: "wait"; checkAt: number }
  /** Silent for RUNNER_SILENCE_MS: queue the job again, then look again at `checkAt`. */
  | { action: "revive"; checkAt: number }
  /** Past its deadline, or silent again after its revivals: fail it, saying `reason`. */
  | { action: "fail"; reason: string };

export const DEADLINE_REASON = "the export passed its deadline without finishing";
export const SILENT_REASON = "the export's runner stopped answering and did not come back after its job was queued again";

/** The moment (Unix ms) from which an export's runner counts as silent. */
export function silentFrom(record: Pick<WatchedExport, "createdAt" | "runnerAliveAt">): number {
  return (record.runnerAliveAt ?? record.createdAt) + RUNNER_SILENCE_MS;
}

/** What to do about an export's runner at `now`. */
export function watchRunner(record: WatchedExport | null, now: number): RunnerVerdict {
  if (!record || !IN_FLIGHT.has(record.status)) return { action: "none" };
  if (isOverdue(record, now)) return { action: "fail", reason: DEADLINE_REASON };
  const silent = silentFrom(record);
  if (now < silent) return { action: "wait", checkAt: Math.min(silent, record.deadlineAt) };
  if (record.revivals < MAX_REVIVALS) return { action: "revive", checkAt: Math.min(now + RUNNER_SILENCE_MS, record.deadlineAt) };
  return { action: "fail", reason: SILENT_REASON };
}

/** Whether a runner whose last heartbeat went out at `lastBeat` should write one at `now`. */
export function heartbeatDue(lastBeat: number, now: number): boolean {
  return now - lastBeat >= HEARTBEAT_EVERY_MS || now < lastBeat;
}
