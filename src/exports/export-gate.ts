import { DurableObject } from "cloudflare:workers";
import { and, desc, eq, ne } from "drizzle-orm";
import { database } from "../db/client";
import { exports } from "../db/schema";
import { describeError, log } from "../http/log";
import { decideExportStart, type GateSettings, type LatestExport, type StartDecision } from "./gate-rules";
import type { ExportJobMessage } from "./messages";

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
 * The gate keeps no state of its own: the D1 `exports` table is the record of what is in flight
 * and when the last export started. The gate learns of a failure from there too, so the job
 * needs no extra call: setting the export's status to `failed` (and to `running`, `ready`) in D1
 * is the whole notification.
 */
export class ExportGate extends DurableObject<Env> {
  /** The tail of the begin calls queued on this object. */
  #tail: Promise<unknown> = Promise.resolve();

  /**
   * Starts an export unless one is in flight or the cooldown window is open. On start: a
   * `pending` row in D1, then one message on EXPORT_JOBS; if the send fails the row is deleted
   * again, so nothing blocks the next start, and the result is `not_queued`.
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
    const decision = decideExportStart(await this.#latestExport(input.databaseId), input.now, input);
    if (decision.outcome !== "start") return decision;

    const { databaseId, exportId } = input;
    const db = database(this.env);
    await db.insert(exports).values({ id: exportId, databaseId, status: "pending", createdAt: input.now });
    try {
      await this.env.EXPORT_JOBS.send({ exportId, databaseId } satisfies ExportJobMessage);
    } catch (err) {
      await db.delete(exports).where(eq(exports.id, exportId));
      log("error", "export job could not be queued; export withdrawn", {
        database_id: databaseId,
        export_id: exportId,
        ...describeError(err),
      });
      return { outcome: "not_queued" };
    }
    return { outcome: "started", exportId };
  }

  /**
   * The newest export that did not fail. The gate never lets a second export start while one is
   * in flight, so if any export is pending or running it is this one.
   */
  async #latestExport(databaseId: string): Promise<LatestExport | null> {
    const row = await database(this.env)
      .select({ status: exports.status, createdAt: exports.createdAt })
      .from(exports)
      .where(and(eq(exports.databaseId, databaseId), ne(exports.status, "failed")))
      .orderBy(desc(exports.createdAt))
      .limit(1)
      .get();
    return row ?? null;
  }
}

/** The gate of a database. */
export function exportGate(env: Env, databaseId: string) {
  return env.EXPORT_GATE.get(env.EXPORT_GATE.idFromName(databaseId));
}
