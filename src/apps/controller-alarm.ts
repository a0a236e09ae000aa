import { renewalTime } from "../billing/renewal";
import { getConfig } from "../config";
import { describeError, log } from "../http/log";
import type { ContainerRuntime } from "../runtime/types";
import type { ControllerMarks } from "./controller-marks";
import { type ControlResult, DEPLOY_DEADLINE_MS, type InFlightRecord, nextAlarm } from "./controls";
import { ENV_APPLY_DEADLINE_MS } from "../envvars/save";
import { envApplyTimedOut } from "./env-apply";
import { checkAppHealth } from "./health-check";
import { renewIfDue } from "./paid-changes";
import { launchOptions } from "./relaunch";
import { RETIRE_RETRY_MS, drainRetireLedger, retireDueAt } from "./retire";
import { retireRowsOf } from "./retire-ledger";
import { type RunnerWatch, watchRunner } from "./runner-watch";
import { getApp } from "./store";
import { teardownApp } from "./teardown";

/** When the next periodic health check is due (ms since the epoch), in the controller's storage. */
const HEALTH_DUE = "health_due";
/** After a retirement the engine did not answer, the next try is not before this (ms since the epoch). */
const RETIRE_RETRY_AT = "retire_retry_at";

/** What the alarm borrows from its AppController. */
export interface AlarmHost {
  env: Env;
  storage: DurableObjectStorage;
  marks: ControllerMarks;
  /** This start of the object (controls.ts InFlightRecord.runner). */
  incarnation: string;
  runtime(): ContainerRuntime | null;
  failDeploy(input: { deployId: string; failure: { kind: string; message: string }; now: number }): Promise<void>;
  restart(input: { appId: string; now: number }): Promise<ControlResult>;
}

/**
 * The app controller's one alarm, for everything timed: the change in flight is looked at
 * (src/apps/runner-watch.ts: a runner silent for a minute, or work lost with a restart of the
 * object, is handed on or ended, so the app is never left `Deploying…`), with the fixed deadlines
 * as the last resort; a paid period that has ended is renewed under the change mark like any other
 * change (src/apps/paid-changes.ts); replaced instances whose drain is over are retired
 * (src/apps/retire.ts); the periodic health check runs. Then the next alarm is set for whichever
 * comes first.
 */
export class ControllerAlarm {
  /** One retirement run, and one health check, at a time in this object. */
  #retiring = false;
  #checking = false;

  constructor(private readonly host: AlarmHost) {}

  async tick(now: number): Promise<void> {
    const { marks } = this.host;
    const appId = marks.appId();
    const watched = marks.inFlight();
    if (watched && appId) await watchRunner(this.#watch(), watched, appId, now);
    await this.#deadlines(now);
    // Only a renewal that is due takes the mark: the alarm also fires for health checks, and a
    // mark taken every time would refuse a control pressed in that moment.
    if (appId && (await this.#renewalDue(appId, now)) && !marks.inFlight()) {
      const mark: InFlightRecord = { kind: "renew", since: now, runner: this.host.incarnation };
      marks.mark(mark, appId);
      try {
        await renewIfDue(this.host.env, appId, now, this.host.runtime());
      } finally {
        marks.clear(mark);
      }
    }
    if (appId) await this.#retire(appId, now);
    if (appId) await this.#checkHealth(appId, now);
    await this.reschedule(now);
  }

  /** A new health check is tried at the next alarm, not at the end of the interval. */
  checkHealthSoon(): void {
    this.host.storage.kv.delete(HEALTH_DUE);
  }

  /** One alarm for everything timed (controls.ts nextAlarm). */
  async reschedule(now: number): Promise<void> {
    const { env, storage, marks } = this.host;
    const appId = marks.appId();
    const app = appId ? await getApp(env, appId) : undefined;
    const healthAt = app?.status === "running" && app.instanceId ? (storage.kv.get<number>(HEALTH_DUE) ?? now) : null;
    const retireAt = appId ? retireDueAt(await retireRowsOf(env, appId), storage.kv.get<number>(RETIRE_RETRY_AT) ?? null) : null;
    const at = nextAlarm(marks.inFlight(), app ? renewalTime(app) : null, now, healthAt, retireAt);
    if (at === null) await storage.deleteAlarm();
    else await storage.setAlarm(at);
  }

  /** The fixed deadlines of a variable set's switch and of a deploy. */
  async #deadlines(now: number): Promise<void> {
    const current = this.host.marks.inFlight();
    if (current?.kind === "env" && now >= current.since + ENV_APPLY_DEADLINE_MS) {
      if (current.appId) await envApplyTimedOut(this.host.env, current.appId, now);
      this.host.marks.clear(current);
    } else if (current?.kind === "deploy" && current.deployId && now >= current.since + DEPLOY_DEADLINE_MS) {
      log("warn", "deploy passed its deadline; marked failed", { deploy_id: current.deployId });
      await this.host.failDeploy({ deployId: current.deployId, failure: { kind: "interrupted", message: "The deploy did not finish in time and was stopped. Deploy again." }, now });
    }
  }

  #watch(): RunnerWatch {
    const { env, incarnation, marks } = this.host;
    return {
      env,
      incarnation,
      runtime: this.host.runtime(),
      remark: (record) => marks.remark(record),
      clear: (record) => void marks.clear(record),
      failDeploy: (input) => this.host.failDeploy(input),
      finishDelete: (appId) => this.#finishDelete(appId),
    };
  }

  /**
   * A Delete lost with a restart of this object (the mark names a dead incarnation): its work is
   * idempotent, so it is run again to the end, as the owner asked, rather than leave an app whose
   * instance or images are already gone (src/apps/teardown.ts). An engine that does not answer
   * throws, and the mark stays for the next alarm.
   */
  async #finishDelete(appId: string): Promise<void> {
    const app = await getApp(this.host.env, appId);
    if (app) await teardownApp(this.host.env, app, this.host.runtime());
    log("info", "interrupted delete finished", { app_id: appId });
    await this.host.storage.deleteAll();
  }

  /** Retires the replaced instances whose drain is over; an engine that did not answer is tried again after RETIRE_RETRY_MS. */
  async #retire(appId: string, now: number): Promise<void> {
    const kv = this.host.storage.kv;
    const retryAt = kv.get<number>(RETIRE_RETRY_AT);
    if (this.#retiring || (retryAt !== undefined && now < retryAt)) return;
    this.#retiring = true;
    try {
      const run = await drainRetireLedger(this.host.env, appId, this.host.runtime(), now, launchOptions(getConfig(this.host.env)).retire.graceSeconds);
      if (run.failed > 0) kv.put(RETIRE_RETRY_AT, now + RETIRE_RETRY_MS);
      else kv.delete(RETIRE_RETRY_AT);
    } catch (err) {
      kv.put(RETIRE_RETRY_AT, now + RETIRE_RETRY_MS);
      log("warn", "retire ledger not drained", { app_id: appId, ...describeError(err) });
    } finally {
      this.#retiring = false;
    }
  }

  async #renewalDue(appId: string, now: number): Promise<boolean> {
    const app = await getApp(this.host.env, appId);
    const at = app ? renewalTime(app) : null;
    return at !== null && now >= at;
  }

  /**
   * The periodic health check of a running app, when it is due (every HEALTH_CHECK_INTERVAL_SECONDS):
   * src/apps/health-check.ts. Its restart is the controller's Restart, so it takes the change mark
   * like any other change. A stopped app is not checked.
   */
  async #checkHealth(appId: string, now: number): Promise<void> {
    const { env, storage } = this.host;
    const due = storage.kv.get<number>(HEALTH_DUE);
    // One check at a time: a slow one (timeout up to 60 s) is not overtaken by the next alarm.
    if ((due !== undefined && now < due) || this.#checking) return;
    const app = await getApp(env, appId);
    if (!app || app.status !== "running" || !app.instanceId) return void storage.kv.delete(HEALTH_DUE);
    storage.kv.put(HEALTH_DUE, now + getConfig(env).HEALTH_CHECK_INTERVAL_SECONDS * 1000);
    this.#checking = true;
    try {
      await checkAppHealth(env, app, now, () => this.host.restart({ appId, now }));
    } catch (err) {
      log("warn", "health check failed", { app_id: appId, ...describeError(err) });
    } finally {
      this.#checking = false;
    }
  }
}
