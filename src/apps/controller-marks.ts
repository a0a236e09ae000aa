import { type Control, type ControlDecision, type InFlightRecord, type Refusal, decideControl } from "./controls";
import { rememberPush } from "../webhooks/push";
import { type AppRow, getApp } from "./store";

export interface ControlOptions {
  /** The deploy the mark names. */
  deployId?: string;
  /** The mark stays after the run (a deploy's job, a rollback's switch, until they report back). */
  keepMark?: boolean;
  /** The work runs on the queue (its heartbeat is in D1), not in this object. */
  queued?: boolean;
}

/**
 * The app controller's change mark (docs/apps.md, App controls): what is in flight, kept in the
 * object's own storage and read and written with the synchronous API, so that no other call can
 * slip in between a decision and the mark. The app the object belongs to is kept with it.
 * Field initializers of the controller build it, so `incarnation` is the controller's own.
 */
export class ControllerMarks {
  constructor(
    private readonly kv: SyncKvStorage,
    private readonly env: Env,
    /** This start of the object: a mark made by another one belongs to work lost with it (controls.ts InFlightRecord.runner). */
    private readonly incarnation: string,
  ) {}

  /**
   * Runs one control: refuses it while another change is in flight or when the app's state does
   * not allow it (docs/apps.md, App controls), else marks it in flight and runs it. The mark is made
   * before the app is read from D1, so a second press arriving meanwhile is refused.
   */
  async control<T>(control: Control, appId: string, now: number, run: (app: AppRow) => Promise<T>, options: ControlOptions = {}): Promise<T | Refusal | Extract<ControlDecision, { outcome: "already_deploying" }>> {
    const current = this.inFlight();
    if (current) {
      const decision = decideControl(control, "not_deployed", current);
      if (decision.outcome !== "go") return decision;
    }
    const mark: InFlightRecord = { kind: control, deployId: options.deployId, since: now, ...(options.queued ? {} : { runner: this.incarnation }) };
    this.mark(mark, appId);
    let keep = false;
    try {
      const app = await getApp(this.env, appId);
      if (!app) throw new Error(`app ${appId} has no record`);
      const decision = decideControl(control, app.status, null);
      if (decision.outcome !== "go") return decision;
      const result = await run(app);
      // A refused run (no funds, no engine) leaves nothing in flight.
      keep = options.keepMark === true && (result as { outcome?: string }).outcome !== "refused";
      return result;
    } finally {
      if (!keep) this.clear(mark);
    }
  }

  inFlight(): InFlightRecord | null {
    return this.kv.get<InFlightRecord>("in_flight") ?? null;
  }

  mark(record: InFlightRecord, appId: string): void {
    this.kv.put<InFlightRecord>("in_flight", record);
    this.kv.put("app_id", appId);
  }

  /** The mark handed on as it is (a deploy's job given to a new runner). */
  remark(record: InFlightRecord): void {
    this.kv.put<InFlightRecord>("in_flight", record);
  }

  /** Clears the mark `record` (a newer one, after its deadline passed, stays); true when cleared. */
  clear(record: Pick<InFlightRecord, "kind" | "since" | "deployId">): boolean {
    const current = this.inFlight();
    if (!current || current.kind !== record.kind || current.since !== record.since || current.deployId !== record.deployId) return false;
    this.kv.delete("in_flight");
    return true;
  }

  /** The app this object belongs to, once a change was marked. */
  appId(): string | undefined {
    return this.kv.get<string>("app_id");
  }

  /** Remembers a push's key (src/webhooks/push.ts); false when it was seen before. */
  rememberPush(push: string): boolean {
    const seen = this.kv.get<string[]>("pushes") ?? [];
    if (seen.includes(push)) return false;
    this.kv.put("pushes", rememberPush(seen, push));
    return true;
  }

  /** Forgets a push whose deploy was refused, so that it may be delivered again. */
  forgetPush(push: string): void {
    this.kv.put("pushes", (this.kv.get<string[]>("pushes") ?? []).filter((key) => key !== push));
  }
}
