import { DurableObject } from "cloudflare:workers";
import type { z } from "zod";
import { getConfig } from "../config";
import { describeError, log } from "../http/log";
import { runtimeFor } from "../runtime";
import { type ContainerRuntime, type Instance, RuntimeUnavailableError } from "../runtime/types";
import { type Control, type ControlDecision, type ControlResult, type DeployResult, CHANGE_IN_FLIGHT_MESSAGE, DEPLOY_IN_PROGRESS_MESSAGE, DEPLOY_DEADLINE_MS, type InFlight } from "./controls";
import { type InFlightRecord, NOT_CURRENT, NO_ENGINE, type Refusal, capacityRefusal, decideControl, nextAlarm, refusal } from "./controls";
import { type SwitchOutcome, launchAndSwitch, liveSpec, retirePolicy } from "./launch";
import { RETIRE_RETRY_MS, drainRetireLedger, retireDueAt } from "./retire";
import { retireRowFor, retireRowsOf } from "./retire-ledger";
import { type RunnerWatch, watchRunner } from "./runner-watch";
import { healthSettings, stepHealth } from "./health";
import { checkAppHealth } from "./health-check";
import type { DeployJobMessage } from "./messages";
import { type PlanId, planLimits } from "./plans";
import { type SettingsOutcome, changeAppSettings } from "./service";
import type { AppSettingsRequest } from "./settings";
import { type AppRow, deployById, failDeployRecord, getApp, instanceColumns, recordLive, switchApp, updateApp } from "./store";
import { teardownApp } from "./teardown";
import { type AppReconcileResult, recordAppRun } from "./reconcile";
import { reconcileAppObjects } from "./reconcile-app";
import { type RollbackResult, prepareRollback, pruneImages, repointStopped, switchRunning } from "./rollback";
import { renewIfDue, renewalTime } from "../billing/renewal";
import { recordDeploy, recordStart, startRefusal, stopColumns } from "../billing/app-events";
import { type EnvApplyRunner, type EnvSaveResult, ENV_APPLY_DEADLINE_MS, envApplyTimedOut, saveEnvSet } from "../envvars/save";
import type { EnvVariable } from "../envvars/rules";
import { launchEnv } from "../envvars/store";
import { pushRefusal, rememberPush } from "../webhooks/push";
import { notifyDeploy } from "../notifications/hooks";

/** When the next periodic health check is due (ms since the epoch), in the controller's storage. */
const HEALTH_DUE = "health_due";
/** After a retirement the engine did not answer, the next try is not before this (ms since the epoch). */
const RETIRE_RETRY_AT = "retire_retry_at";

/**
 * One per app (named by the app id): the one path of every change to an app (deploy and its
 * completion, stop, start, restart, change plan, settings, variables, renewal, delete). What is
 * in flight is kept in its own storage, read and written with the synchronous API so that no
 * other call can slip in between the decision and the mark. D1 stays the record of the app.
 */
export class AppController extends DurableObject<Env> {
  /** This start of the object: a mark made by another one belongs to work lost with it (controls.ts InFlightRecord.runner). */
  readonly #incarnation = crypto.randomUUID();

  #inFlight(): InFlightRecord | null {
    return this.ctx.storage.kv.get<InFlightRecord>("in_flight") ?? null;
  }

  #mark(record: InFlightRecord, appId: string): void {
    this.ctx.storage.kv.put<InFlightRecord>("in_flight", record);
    this.ctx.storage.kv.put("app_id", appId);
  }

  /** Clears the mark `record` (a newer one, after its deadline passed, stays); true when cleared. */
  #clear(record: Pick<InFlightRecord, "kind" | "since" | "deployId">): boolean {
    const current = this.#inFlight();
    if (!current || current.kind !== record.kind || current.since !== record.since || current.deployId !== record.deployId) return false;
    this.ctx.storage.kv.delete("in_flight");
    return true;
  }

  #runtime = (): ContainerRuntime | null => runtimeFor(this.env);

  /** A periodic health check is running in this object now. */
  #checking = false;

  /** What is in flight now, for the console (the deploy button's label). */
  inFlight(): InFlight {
    const current = this.#inFlight();
    return current ? { kind: current.kind, deployId: current.deployId } : null;
  }

  /**
   * Runs one control: refuses it while another change is in flight or when the app's state does
   * not allow it (docs/apps.md, App controls), else marks it in flight and runs it. The mark is made
   * before the app is read from D1, so a second press arriving meanwhile is refused.
   */
  async #control<T>(control: Control, appId: string, now: number, run: (app: AppRow) => Promise<T>, options: { deployId?: string; keepMark?: boolean; queued?: boolean } = {}): Promise<T | Refusal | Extract<ControlDecision, { outcome: "already_deploying" }>> {
    const current = this.#inFlight();
    if (current) {
      const decision = decideControl(control, "not_deployed", current);
      if (decision.outcome !== "go") return decision;
    }
    // A deploy's job runs on the queue (its heartbeat is in D1); everything else runs here.
    const mark: InFlightRecord = { kind: control, deployId: options.deployId, since: now, ...(options.queued ? {} : { runner: this.#incarnation }) };
    this.#mark(mark, appId);
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
      if (!keep) this.#clear(mark);
    }
  }

  /**
   * A verified push to the deploy branch: the same deploy as pressing Deploy, recorded as `push`,
   * refused before the first Deploy (src/webhooks/push.ts). A push seen before (by `push`, its key:
   * the ref and commits its signature covers, whatever delivery id came with it) answers
   * `duplicate` and starts nothing; the key is remembered before anything is awaited, so a replay
   * racing the original cannot pass either, and forgotten again when the deploy is refused.
   */
  async deployOnPush(input: { appId: string; deployId: string; now: number; push: string }): Promise<DeployResult | { outcome: "duplicate" }> {
    const seen = this.ctx.storage.kv.get<string[]>("pushes") ?? [];
    if (seen.includes(input.push)) return { outcome: "duplicate" };
    this.ctx.storage.kv.put("pushes", rememberPush(seen, input.push));
    const result = await this.deploy({ appId: input.appId, deployId: input.deployId, now: input.now, kind: "push" });
    if (result.outcome === "refused") this.ctx.storage.kv.put("pushes", (this.ctx.storage.kv.get<string[]>("pushes") ?? []).filter((key) => key !== input.push));
    return result;
  }

  /** Deploy / Redeploy: records the deploy and queues its job; the mark stays until the job reports back or its deadline passes. */
  async deploy(input: { appId: string; deployId: string; now: number; kind?: "deploy" | "push" }): Promise<DeployResult> {
    return this.#control(
      "deploy",
      input.appId,
      input.now,
      async (app) => {
        if (input.kind === "push") {
          const refused = pushRefusal(app);
          if (refused) return refused;
        }
        // Billing: the first deploy, or one that would run an app whose paid period has ended, is
        // charged before the build starts, or refused. With no engine configured the deploy fails
        // at once, the service's fault: nothing is charged.
        const runtime = this.#runtime();
        // A first deploy that cannot be placed is refused before anything is charged.
        const full = await capacityRefusal(runtime, app, planLimits(app.plan as PlanId).memoryBytes).catch((err: unknown) => {
          if (err instanceof RuntimeUnavailableError) return { ...ENGINE_DOWN, message: `${ENGINE_DOWN.message} ${err.message}` };
          throw err;
        });
        if (full) return full;
        const billed = await recordDeploy(this.env, app, input.deployId, input.now, { charge: runtime !== null, kind: input.kind });
        if (!billed.ok) return refusal(billed);
        await this.env.DEPLOY_JOBS.send({ appId: app.id, deployId: input.deployId } satisfies DeployJobMessage);
        await this.#reschedule(input.now);
        return { outcome: "started" as const, deployId: input.deployId };
      },
      { deployId: input.deployId, keepMark: true, queued: true },
    );
  }

  /**
   * The deploy's switch: the deploy goes live and the app moves to its new instance, as a
   * compare-and-set on `replaces`, the instance the job found serving. `instance: null` is a
   * deploy of a stopped app: built only, the app stays stopped and Start runs the new version.
   * Not switched when the deploy is no longer the one in flight (failed meanwhile, app deleted).
   */
  async completeDeploy(input: { deployId: string; instance: Instance | null; replaces: string | null; envVersion: number; now: number }): Promise<SwitchOutcome> {
    const current = this.#inFlight();
    if (current?.kind !== "deploy" || current.deployId !== input.deployId) return { switched: false, reason: "the deploy was no longer current." };
    const deploy = await deployById(this.env, input.deployId);
    const app = deploy && (await getApp(this.env, deploy.appId));
    let outcome: SwitchOutcome = { switched: false, reason: "the app was deleted." };
    if (deploy && app) {
      const set = input.instance
        ? { status: "running" as const, ...instanceColumns(input.instance), envAppliedVersion: input.envVersion }
        : {};
      const builtOnly = input.instance === null && app.status === "stopped";
      const retire = input.instance ? this.#retireRow(app, input.instance.id) : null;
      outcome =
        (input.instance !== null || builtOnly) && (await recordLive(this.env, deploy, app, set, input.replaces, input.now, retire))
          ? { switched: true, replaced: { instanceId: builtOnly ? null : app.instanceId, image: null, serving: app.status === "running" } }
          : { switched: false, reason: NOT_CURRENT };
    }
    this.#clear(current);
    // The replaced image stays for rollback; only images older than the last live deploys go (an
    // image its draining instance still runs goes at its retirement, src/apps/retire.ts).
    const runtime = this.#runtime();
    if (outcome.switched && runtime && deploy) await pruneImages(this.env, deploy.appId, runtime).catch((err: unknown) => log("warn", "images not pruned", { app_id: deploy.appId, ...describeError(err) }));
    if (outcome.switched) await notifyDeploy(this.env, input.deployId, input.now);
    await this.#reschedule(input.now);
    return outcome;
  }

  /** The deploy failed: recorded with its interpretation; a never-started app becomes `failed`. */
  async failDeploy(input: { deployId: string; failure: { kind: string; message: string }; now: number }): Promise<void> {
    const deploy = await deployById(this.env, input.deployId);
    const current = this.#inFlight();
    const ours = current?.kind === "deploy" && current.deployId === input.deployId ? current : null;
    // A failed change: the reconciler looks at the app now (its instance gone, an object left
    // behind), under the deploy's own mark, so the failure is recorded and the mark cleared only
    // after it: a Deploy pressed once the deploy shows failed is never refused by this look.
    if (deploy && ours) {
      try {
        const runtime = this.#runtime();
        const actions = runtime ? await this.#reconcileObjects(runtime, deploy.appId, input.now) : [];
        await recordAppRun(this.env, deploy.appId, input.now, { outcome: "done", actions });
      } catch (err) {
        log("warn", "app not reconciled after a failed deploy", { app_id: deploy.appId, ...describeError(err) });
      }
    }
    if (deploy) await failDeployRecord(this.env, deploy, input.failure, input.now);
    if (deploy) await notifyDeploy(this.env, deploy.id, input.now);
    if (ours) this.#clear(ours);
    await this.#reschedule(Date.now());
  }

  override async alarm(): Promise<void> {
    await this.tick(Date.now());
  }

  /**
   * The alarm's work at `now`: the change in flight is looked at (src/apps/runner-watch.ts: a
   * runner silent for a minute, or work lost with a restart of this object, is handed on or ended,
   * so the app is never left `Deploying…`), with the fixed deadlines as the last resort; a paid
   * period that has ended is renewed under the change mark like any other change
   * (src/billing/renewal.ts); replaced instances whose drain is over are retired
   * (src/apps/retire.ts). Then the next alarm is set for whichever comes first.
   */
  async tick(now: number): Promise<void> {
    const appId = this.ctx.storage.kv.get<string>("app_id");
    const watched = this.#inFlight();
    if (watched && appId) await watchRunner(this.#watch(), watched, appId, now);
    const current = this.#inFlight();
    if (current?.kind === "env" && now >= current.since + ENV_APPLY_DEADLINE_MS) {
      if (current.appId) await envApplyTimedOut(this.env, current.appId, now);
      this.#clear(current);
    } else if (current?.kind === "deploy" && current.deployId && now >= current.since + DEPLOY_DEADLINE_MS) {
      log("warn", "deploy passed its deadline; marked failed", { deploy_id: current.deployId });
      await this.failDeploy({
        deployId: current.deployId,
        failure: { kind: "interrupted", message: "The deploy did not finish in time and was stopped. Deploy again." },
        now,
      });
    }
    // Only a renewal that is due takes the mark: the alarm also fires for health checks, and a
    // mark taken every time would refuse a control pressed in that moment.
    if (appId && (await this.#renewalDue(appId, now)) && !this.#inFlight()) {
      const mark: InFlightRecord = { kind: "renew", since: now, runner: this.#incarnation };
      this.#mark(mark, appId);
      try {
        await renewIfDue(this.env, appId, now, this.#runtime());
      } finally {
        this.#clear(mark);
      }
    }
    if (appId) await this.#retire(appId, now);
    if (appId) await this.#checkHealth(appId, now);
    await this.#reschedule(now);
  }

  #watch(): RunnerWatch {
    return {
      env: this.env,
      incarnation: this.#incarnation,
      runtime: this.#runtime(),
      remark: (record) => this.ctx.storage.kv.put<InFlightRecord>("in_flight", record),
      clear: (record) => void this.#clear(record),
      failDeploy: (input) => this.failDeploy(input),
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
    const app = await getApp(this.env, appId);
    if (app) await teardownApp(this.env, app, this.#runtime());
    log("info", "interrupted delete finished", { app_id: appId });
    await this.ctx.storage.deleteAll();
  }

  /** One retirement run at a time in this object (a second alarm meanwhile finds it running). */
  #retiring = false;

  /** Retires the replaced instances whose drain is over; an engine that did not answer is tried again after RETIRE_RETRY_MS. */
  async #retire(appId: string, now: number): Promise<void> {
    const retryAt = this.ctx.storage.kv.get<number>(RETIRE_RETRY_AT);
    if (this.#retiring || (retryAt !== undefined && now < retryAt)) return;
    this.#retiring = true;
    try {
      const run = await drainRetireLedger(this.env, appId, this.#runtime(), now, retirePolicy(getConfig(this.env)).graceSeconds);
      if (run.failed > 0) this.ctx.storage.kv.put(RETIRE_RETRY_AT, now + RETIRE_RETRY_MS);
      else this.ctx.storage.kv.delete(RETIRE_RETRY_AT);
    } catch (err) {
      this.ctx.storage.kv.put(RETIRE_RETRY_AT, now + RETIRE_RETRY_MS);
      log("warn", "retire ledger not drained", { app_id: appId, ...describeError(err) });
    } finally {
      this.#retiring = false;
    }
  }

  async #renewalDue(appId: string, now: number): Promise<boolean> {
    const app = await getApp(this.env, appId);
    const at = app ? renewalTime(app) : null;
    return at !== null && now >= at;
  }

  /**
   * The periodic health check of a running app, when it is due (every HEALTH_CHECK_INTERVAL_SECONDS):
   * src/apps/health-check.ts. Its restart is this controller's Restart, so it takes the change mark
   * like any other change. A stopped app is not checked.
   */
  async #checkHealth(appId: string, now: number): Promise<void> {
    const due = this.ctx.storage.kv.get<number>(HEALTH_DUE);
    // One check at a time: a slow one (timeout up to 60 s) is not overtaken by the next alarm.
    if ((due !== undefined && now < due) || this.#checking) return;
    const app = await getApp(this.env, appId);
    if (!app || app.status !== "running" || !app.instanceId) return void this.ctx.storage.kv.delete(HEALTH_DUE);
    this.ctx.storage.kv.put(HEALTH_DUE, now + getConfig(this.env).HEALTH_CHECK_INTERVAL_SECONDS * 1000);
    this.#checking = true;
    try {
      await checkAppHealth(this.env, app, now, () => this.restart({ appId, now }));
    } catch (err) {
      log("warn", "health check failed", { app_id: appId, ...describeError(err) });
    } finally {
      this.#checking = false;
    }
  }

  /** One alarm for everything timed (controls.ts nextAlarm). */
  async #reschedule(now: number): Promise<void> {
    const appId = this.ctx.storage.kv.get<string>("app_id");
    const app = appId ? await getApp(this.env, appId) : undefined;
    const healthAt = app?.status === "running" && app.instanceId ? (this.ctx.storage.kv.get<number>(HEALTH_DUE) ?? now) : null;
    const retireAt = appId ? retireDueAt(await retireRowsOf(this.env, appId), this.ctx.storage.kv.get<number>(RETIRE_RETRY_AT) ?? null) : null;
    const at = nextAlarm(this.#inFlight(), app ? renewalTime(app) : null, now, healthAt, retireAt);
    if (at === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(at);
  }

  /** Stop: the app goes offline, settings kept; billing rule 3's stopped clock starts. */
  stop(input: { appId: string; now: number }): Promise<ControlResult> {
    return this.#engineControl("stop", input, async (app, runtime) => {
      if (app.instanceId) await runtime.stop(app.instanceId);
      await updateApp(this.env, app.id, stopColumns(app, input.now));
      return { outcome: "done" };
    });
  }

  /** Start: the app returns on its current plan, as a new instance of its live image (the last one built). */
  start(input: { appId: string; now: number }): Promise<ControlResult> {
    return this.#engineControl("start", input, async (app, runtime) => {
      // Billing rule 4 (or a fresh month once the period has ended): refused before anything runs.
      const affordable = await startRefusal(this.env, app, input.now);
      if (!affordable.ok) return refusal(affordable);
      let refused: Refusal | null = null;
      const result = await this.#relaunch(app, runtime, app.plan as PlanId, async (instance, envVersion) => {
        const billed = await recordStart(this.env, app, input.now, { ...instanceColumns(instance), instanceId: instance.id, envAppliedVersion: envVersion }, this.#retireRow(app, instance.id));
        if (billed === "not_switched") return { switched: false, reason: NOT_CURRENT };
        if (!billed.ok) return (refused = refusal(billed)), { switched: false, reason: billed.message };
        return { switched: true, replaced: { instanceId: app.instanceId, image: null, serving: false } };
      });
      return refused ?? result;
    });
  }

  /** Restart: the same instance restarted in place, no rebuild. */
  restart(input: { appId: string; now: number }): Promise<ControlResult> {
    return this.#engineControl("restart", input, async (app, runtime) => {
      if (!app.instanceId) return { outcome: "refused", code: "INVALID_STATE", message: "The app has no instance to restart." };
      // An instance gone from the engine (removed by a Delete cut short, or by hand) comes back as a
      // new instance of the live image, as the reconciler would bring it back.
      if ((await runtime.inspect(app.instanceId)) === null) {
        return (await this.#restoreRunning(runtime, app.id, input.now)) ? { outcome: "done" } : { outcome: "refused", code: "LAUNCH_FAILED", message: "The app's instance was gone and a new one did not start. Try again in a moment." };
      }
      const instance = await runtime.restart(app.instanceId);
      // The health check's grace period begins again with the restarted process.
      await updateApp(this.env, app.id, { ...instanceColumns(instance), health: stepHealth(app.health, { kind: "restarted", now: input.now }, healthSettings(app.healthCheck).graceSeconds).record });
      return { outcome: "done" };
    });
  }

  /** Change plan: a running app moves to a new instance with the plan's limits; any other only records the plan. */
  changePlan(input: { appId: string; plan: PlanId; now: number }): Promise<ControlResult> {
    return this.#control("plan", input.appId, input.now, async (app): Promise<ControlResult> => {
      if (app.status !== "running" || !app.image) {
        await updateApp(this.env, app.id, { plan: input.plan });
        return { outcome: "done" };
      }
      const runtime = this.#runtime();
      if (!runtime) return NO_ENGINE;
      return this.#relaunch(app, runtime, input.plan, async (instance, envVersion) =>
        (await switchApp(this.env, app.id, { plan: input.plan, ...instanceColumns(instance), instanceId: instance.id, envAppliedVersion: envVersion }, { instanceId: app.instanceId }, this.#retireRow(app, instance.id)))
          ? { switched: true, replaced: { instanceId: app.instanceId, image: null, serving: true } }
          : { switched: false, reason: NOT_CURRENT },
      );
    }) as Promise<ControlResult>;
  }

  /** Settings (name, repository, build paths, subdomain): checked against the record as it is now, with the mark held. */
  async changeSettings(input: { appId: string; settings: z.output<typeof AppSettingsRequest>; now: number }): Promise<SettingsOutcome | Refusal> {
    const outcome = (await this.#control("settings", input.appId, input.now, (app) => changeAppSettings(this.env, app, input.settings))) as SettingsOutcome | Refusal;
    if ("ok" in outcome && outcome.ok && input.settings.health_check !== undefined) {
      // A new health check is tried at once, not at the end of the interval.
      this.ctx.storage.kv.delete(HEALTH_DUE);
      await this.#reschedule(input.now);
    }
    return outcome;
  }

  /**
   * Saves an app's whole variable set (docs/envvars.md, rules 6 and 7): refused while any
   * change is in flight. When the app is serving, a new instance with the new set takes over in the
   * background (waitUntil keeps the object alive) and the mark stays until it has or has failed;
   * the deadline alarm covers a run lost anyway.
   */
  async saveEnv(input: { appId: string; version: number; variables: EnvVariable[]; now: number }): Promise<EnvSaveResult> {
    if (this.#inFlight()) return { outcome: "refused", code: "DEPLOY_IN_PROGRESS", message: DEPLOY_IN_PROGRESS_MESSAGE };
    const mark: InFlightRecord = { kind: "env", appId: input.appId, since: input.now, runner: this.#incarnation };
    this.#mark(mark, input.appId);
    let apply: EnvApplyRunner | null = null;
    try {
      const saved = await saveEnvSet(this.env, input);
      if ("apply" in saved) apply = saved.apply;
      return saved.outcome === "saved" ? { outcome: "saved", version: saved.version, effect: saved.effect } : saved;
    } finally {
      if (apply) {
        await this.#reschedule(input.now);
        // The switch runs on in this object; the mark names this incarnation, so a restart that loses
        // the run is noticed by the next alarm (src/apps/runner-watch.ts), and the deadline stays the last resort.
        this.ctx.waitUntil(
          apply().then(async () => {
            this.#clear(mark);
            await this.#reschedule(Date.now());
          }),
        );
      } else this.#clear(mark);
    }
  }

  /**
   * Rollback to an earlier deploy's image (src/apps/rollback.ts): recorded as a deploy of kind
   * `rollback` under the deploy mark, refused like Stop or Start while any change is in flight
   * (CHANGE_IN_FLIGHT). A running app switches in the background, the mark held until it has or
   * has failed; a stopped one only takes the image for its next Start.
   */
  async rollback(input: { appId: string; targetId: string; deployId: string; now: number }): Promise<RollbackResult> {
    const result = await this.#control(
      "deploy",
      input.appId,
      input.now,
      async (app): Promise<RollbackResult> => {
        const runtime = this.#runtime();
        if (!runtime) return NO_ENGINE;
        const steps = { complete: (step: Parameters<AppController["completeDeploy"]>[0]) => this.completeDeploy(step), fail: (step: Parameters<AppController["failDeploy"]>[0]) => this.failDeploy(step) };
        const prepared = await prepareRollback(this.env, { app, targetId: input.targetId, deployId: input.deployId, now: input.now, runtime });
        if ("outcome" in prepared) return prepared;
        if (prepared.plan === "repoint") await repointStopped(prepared, steps, input.now);
        else {
          await this.#reschedule(input.now);
          this.ctx.waitUntil(switchRunning(this.env, runtime, prepared, steps));
        }
        return { outcome: "started", deployId: input.deployId };
      },
      { deployId: input.deployId, keepMark: true },
    );
    return result.outcome === "already_deploying" ? { outcome: "refused", code: "CHANGE_IN_FLIGHT", message: CHANGE_IN_FLIGHT_MESSAGE } : result;
  }

  /** Delete: instance, images, logs and record removed; cannot be undone. */
  async delete(input: { appId: string; now: number }): Promise<ControlResult> {
    const result = (await this.#control("delete", input.appId, input.now, async (app): Promise<ControlResult> => {
      await teardownApp(this.env, app, this.#runtime());
      return { outcome: "done" };
    })) as ControlResult;
    if (result.outcome === "done") await this.ctx.storage.deleteAll();
    return result;
  }

  /**
   * The reconciler's step for this app (src/apps/reconcile.ts), under the change mark. It sets the
   * object's alarm when none is set; while a change is in flight it answers `busy` and has the
   * alarm look at that change's runner now (one lost with a restart of this object is ended
   * there). With `look`, the app's objects on the engine are compared with its records as they are
   * now and put right; a running app whose instance is gone gets a new one of its live image
   * through the one launch path, its billing untouched.
   */
  async reconcile(input: { appId: string; now: number; look: boolean }): Promise<AppReconcileResult> {
    // A restart must not leave the object without its alarm (the ledger's drain, a runner's watch).
    if ((await this.ctx.storage.getAlarm()) === null) await this.#reschedule(Date.now());
    if (this.#inFlight()) {
      await this.ctx.storage.setAlarm(Date.now());
      return { outcome: "busy" };
    }
    const runtime = this.#runtime();
    if (!input.look || !runtime) return { outcome: "done", actions: [] };
    const mark: InFlightRecord = { kind: "reconcile", since: input.now, runner: this.#incarnation };
    this.#mark(mark, input.appId);
    try {
      return { outcome: "done", actions: await this.#reconcileObjects(runtime, input.appId, input.now) };
    } finally {
      this.#clear(mark);
    }
  }

  /** The reconciler's look at one app, with a change mark already held by the caller. */
  #reconcileObjects(runtime: ContainerRuntime, appId: string, now: number) {
    return reconcileAppObjects(this.env, runtime, appId, now, () => this.#restoreRunning(runtime, appId, now));
  }

  /** A running app whose instance is gone gets a new one of its live image, billing untouched; false when it did not start. */
  async #restoreRunning(runtime: ContainerRuntime, appId: string, now: number): Promise<boolean> {
    const app = await getApp(this.env, appId);
    if (app?.status !== "running") return false;
    const health = stepHealth(app.health, { kind: "restarted", now }, healthSettings(app.healthCheck).graceSeconds).record;
    const result = await this.#relaunch(app, runtime, app.plan as PlanId, async (instance, envVersion) =>
      (await updateApp(this.env, app.id, { ...instanceColumns(instance), envAppliedVersion: envVersion, health }, { instanceId: app.instanceId }))
        ? { switched: true, replaced: { instanceId: null, image: null, serving: false } }
        : { switched: false, reason: NOT_CURRENT },
    );
    return result.outcome === "done";
  }

  #engineControl(control: "stop" | "start" | "restart", input: { appId: string; now: number }, run: (app: AppRow, runtime: ContainerRuntime) => Promise<ControlResult>): Promise<ControlResult> {
    return this.#control(control, input.appId, input.now, async (app) => {
      const runtime = this.#runtime();
      if (!runtime) return NO_ENGINE;
      return run(app, runtime);
    }) as Promise<ControlResult>;
  }

  /** The retire row of the instance a switch to `instanceId` now replaces (null: nothing to retire); its drain starts at the switch. */
  #retireRow(app: AppRow, instanceId: string) {
    return retireRowFor(app, instanceId, Date.now(), retirePolicy(getConfig(this.env)).drainSeconds);
  }

  /** A new instance of the app's live image on `plan`, through the one launch-and-switch. */
  async #relaunch(app: AppRow, runtime: ContainerRuntime, plan: PlanId, switchTo: (instance: Instance, envVersion: number) => Promise<SwitchOutcome>): Promise<ControlResult> {
    const variables = await launchEnv(this.env, app.id);
    const spec = liveSpec(app, plan, variables.env);
    if (!spec) return { outcome: "refused", code: "INVALID_STATE", message: "The app has no built image yet. Deploy it first." };
    // The control answers at the switch; the old instance's retire row came with it, and the alarm drains it.
    const outcome = await launchAndSwitch({
      runtime,
      spec,
      replaces: app.instanceId,
      probeTimeoutSeconds: getConfig(this.env).PROBE_TIMEOUT_SECONDS,
      switchTo: (instance) => switchTo(instance, variables.version),
    });
    if (outcome.ok) {
      await this.#reschedule(Date.now());
      return { outcome: "done" };
    }
    log("warn", "instance launch failed", { app_id: app.id, kind: outcome.kind });
    return { outcome: "refused", code: "LAUNCH_FAILED", message: outcome.message };
  }
}

const ENGINE_DOWN: Refusal = { outcome: "refused", code: "ENGINE_UNAVAILABLE", message: "The container engine could not be asked whether the app fits. No charge was made." };

/** The controller of an app. */
export function appController(env: Env, appId: string) {
  return env.APP.get(env.APP.idFromName(appId));
}
