import { DurableObject } from "cloudflare:workers";
import { describeError, log } from "../http/log";
import { decideExportStart, type GateSettings, type StartDecision } from "./gate-rules";
import { deadlineFor } from "./job-limits";
import type { ExportJobMessage } from "./messages";
import { insertPendingExport, latestUnfailedExport, markExportFailed, withdrawExport } from "./store";

export interface BeginExportInput extends GateSettings {
  databaseId: string;
  /** Id for the new export, chosen by the caller (the Worker's injectable uuid). */
  exportId: string;
  /** Unix ms, from the Worker's injectable clock: the export's `created_at`. */
  now: number;
}

export type BeginExportResult =
  | { outcome: "started"; exportId: string }
  | Exclude<StartDecision, { outcome: "start" }>
  | { outcome: "not_queued" };

/**
 * One per database (named by the database id): the single point where export starts are
 * serialised, so however many start requests race, at most one export is in flight.
 *
 * The gate keeps no state of its own: the D1 `exports` table (through the export store) is the
 * record of what is in flight and when the last export started. An export past its deadline is
 * failed here, at the next start, without waiting for the sweep.
 */
export class ExportGate extends DurableObject<Env> {
  /** The tail of the begin calls queued on this object. */
  #tail: Promise<unknown> = Promise.resolve();

  /**
   * Starts an export unless one is in flight or the cooldown window is open. On start: a
   * `pending` row in D1 with its deadline, then one message on EXPORT_JOBS; if the send fails
   * the row is deleted again, so nothing blocks the next start, and the result is `not_queued`.
   */
  begin(input: BeginExportInput): Promise<BeginExportResult> {
    // A Durable Object runs one event at a time only until it awaits I/O outside its own storage
    // (D1, the queue); then the next call may enter. Chaining every call on the previous one keeps
    // read-decide-insert-send a single step.
    const run = this.#tail.then(() => this.#begin(input));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #begin(input: BeginExportInput): Promise<BeginExportResult> {
    const { databaseId, exportId, now } = input;
    const latest = await latestUnfailedExport(this.env, databaseId);
    const decision = decideExportStart(latest, now, input);
    if (decision.outcome !== "start") return decision;
    if (decision.failLatest && latest) {
      await markExportFailed(this.env, { databaseId, exportId: latest.id }, "the export passed its deadline without finishing", now);
    }

    await insertPendingExport(this.env, { databaseId, exportId }, now, deadlineFor(now));
    try {
      await this.env.EXPORT_JOBS.send({ exportId, databaseId } satisfies ExportJobMessage);
    } catch (err) {
      await withdrawExport(this.env, { databaseId, exportId });
      log("error", "export job could not be queued; export withdrawn", { database_id: databaseId, export_id: exportId, ...describeError(err) });
      return { outcome: "not_queued" };
    }
    return { outcome: "started", exportId };
  }
}

/** The gate of a database. */
export function exportGate(env: Env, databaseId: string) {
  return env.EXPORT_GATE.get(env.EXPORT_GATE.idFromName(databaseId));
}
