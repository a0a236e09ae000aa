import { DurableObject } from "cloudflare:workers";
import { managedDatabase } from "../databases/service";
import { describeError, log } from "../http/log";
import { decideExportStart, type GateSettings, type StartDecision } from "./gate-rules";
import { deadlineFor } from "./job-limits";
import type { ExportJobMessage } from "./messages";
import { RUNNER_SILENCE_MS, type RunnerVerdict, watchRunner } from "./runner-watch";
import { type ExportRecord, insertPendingExport, latestUnfailedExport, markExportFailed, reviveExport, withdrawExport } from "./store";

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

/** The database this gate serves, kept in its storage so that its alarm knows. */
const DATABASE_KEY = "database";

/**
 * One per database (named by the database id): the single point where export starts are
 * serialised, so however many start requests race, at most one export is in flight.
 *
 * The D1 `exports` table (through the export store) is the record of what is in flight and when
 * the last export started; the gate keeps only its database's id and an alarm. While an export is
 * in flight the alarm watches its runner (runner-watch.ts): silent for a minute, its job is queued
 * once more and goes on from its last checkpoint; silent again, the export fails (its link answers
 * 404, the database is free). The same watch runs at every start, so a start never waits for the alarm.
 */
export class ExportGate extends DurableObject<Env> {
  /** The tail of the calls queued on this object. */
  #tail: Promise<unknown> = Promise.resolve();

  /**
   * Starts an export unless one is in flight or the cooldown window is open. On start: a
   * `pending` row in D1 with its deadline, then one message on EXPORT_JOBS; if the send fails
   * the row is deleted again, so nothing blocks the next start, and the result is `not_queued`.
   */
  begin(input: BeginExportInput): Promise<BeginExportResult> {
    return this.#serial(() => this.#begin(input));
  }

  /** Looks at the database's export in flight at `now` (the alarm's clock, or a test's) and acts on its runner's silence. */
  watch(databaseId: string, now: number): Promise<RunnerVerdict["action"]> {
    return this.#serial(async () => {
      this.#remember(databaseId);
      return this.#watch(await latestUnfailedExport(this.env, databaseId), now);
    });
  }

  override async alarm(): Promise<void> {
    const databaseId = this.ctx.storage.kv.get<string>(DATABASE_KEY);
    // A throw here makes the runtime try the alarm again, with backoff.
    if (databaseId !== undefined) await this.watch(databaseId, Date.now());
  }

  // A Durable Object runs one event at a time only until it awaits I/O outside its own storage
  // (D1, the queue); then the next call may enter. Chaining every call on the previous one keeps
  // read-decide-write-send a single step.
  #serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(run);
    this.#tail = next.catch(() => undefined);
    return next;
  }

  async #begin(input: BeginExportInput): Promise<BeginExportResult> {
    const { databaseId, exportId, now } = input;
    this.#remember(databaseId);
    const latest = await latestUnfailedExport(this.env, databaseId);
    const dead = (await this.#watch(latest, now)) === "fail";
    // A failed export neither blocks nor starts a cooldown, and it started after any older one's cooldown.
    const decision = dead ? ({ outcome: "start" } as const) : decideExportStart(latest, now, input);
    if (decision.outcome !== "start") return decision;

    await insertPendingExport(this.env, { databaseId, exportId }, now, deadlineFor(now));
    if (!(await this.#send({ exportId, databaseId }))) {
      await withdrawExport(this.env, { databaseId, exportId });
      return { outcome: "not_queued" };
    }
    await this.#arm(now + RUNNER_SILENCE_MS);
    return { outcome: "started", exportId };
  }

  /** Acts on the verdict about `record` at `now` and sets the alarm for the next look (or none). */
  async #watch(record: ExportRecord | null, now: number): Promise<RunnerVerdict["action"]> {
    const verdict = watchRunner(record, now);
    if (record === null || verdict.action === "none") {
      await this.#arm(null);
      return verdict.action;
    }
    const ref = { databaseId: record.databaseId, exportId: record.id };
    const fields = { export_id: record.id, database_id: record.databaseId };
    if (verdict.action === "fail") {
      if (await markExportFailed(this.env, ref, verdict.reason, now)) {
        log("warn", "export failed: its runner is gone", { ...fields, reason: verdict.reason });
        await managedDatabase(this.env, ref.databaseId)
          .releaseDump(ref.exportId)
          .catch((err: unknown) => log("warn", "could not release the dump lease; it lapses by itself", { ...fields, ...describeError(err) }));
      }
      await this.#arm(null);
      return verdict.action;
    }
    // Counted before the message goes, so a second look cannot send another; a send that failed
    // leaves the export to fail at the next look, a minute on.
    if (verdict.action === "revive" && (await reviveExport(this.env, ref, record, now))) {
      const sent = await this.#send(ref);
      log("warn", "export runner silent; its job is queued again from the last checkpoint", { ...fields, queued: sent });
    }
    await this.#arm(verdict.checkAt);
    return verdict.action;
  }

  #remember(databaseId: string): void {
    if (this.ctx.storage.kv.get<string>(DATABASE_KEY) !== databaseId) this.ctx.storage.kv.put(DATABASE_KEY, databaseId);
  }

  /** Sets the alarm to `at` (null: none), writing only when it changes: most looks find it already set. */
  async #arm(at: number | null): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) === at) return;
    if (at === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(at);
  }

  async #send(ref: ExportJobMessage): Promise<boolean> {
    try {
      await this.env.EXPORT_JOBS.send({ exportId: ref.exportId, databaseId: ref.databaseId } satisfies ExportJobMessage);
      return true;
    } catch (err) {
      log("error", "export job could not be queued", { database_id: ref.databaseId, export_id: ref.exportId, ...describeError(err) });
      return false;
    }
  }
}

/** The gate of a database. */
export function exportGate(env: Env, databaseId: string) {
  return env.EXPORT_GATE.get(env.EXPORT_GATE.idFromName(databaseId));
}
