import { DurableObject } from "cloudflare:workers";
import type { z } from "zod";
import { describeError, log } from "../http/log";
import { runtimeFor } from "../runtime";
import type { ContainerRuntime, Instance } from "../runtime/types";
import { type Control, type ControlResult, type DeployResult, CHANGE_IN_FLIGHT_MESSAGE, DEPLOY_IN_PROGRESS_MESSAGE, type InFlight, type InFlightRecord, NO_ENGINE, type Refusal } from "./controls";
import type { SwitchOutcome } from "./launch";
import { type ChangeHost, changeAppPlan, restartApp, restoreRunning, startApp, stopApp } from "./app-changes";
import { failDeployRecord } from "./app-columns";
import { ControllerAlarm } from "./controller-alarm";
import { type ControlOptions, ControllerMarks } from "./controller-marks";
import { beginDeploy, goLive } from "./deploy-steps";
import type { PlanId } from "./plans";
import { type SettingsOutcome, changeAppSettings } from "./service";
import type { AppSettingsRequest } from "./settings";
import { type AppRow, deployById, getApp } from "./store";
import { teardownApp } from "./teardown";
import { type AppReconcileResult, recordAppRun } from "./reconcile";
import { reconcileAppObjects } from "./reconcile-app";
import { type RollbackResult, type RollbackSteps, prepareRollback, pruneImages, repointStopped, switchRunning } from "./rollback";
import { saveEnvSet } from "./env-apply";
import type { EnvApplyRunner, EnvSaveResult } from "../envvars/save";
import type { EnvVariable } from "../envvars/rules";
import { notifyDeploy } from "../notifications/hooks";

/**
 * One per app (named by the app id): the one path of every change to an app (deploy and its
 * completion, stop, start, restart, change plan, settings, variables, renewal, delete), and the
 * owner of the app's columns (src/apps/app-columns.ts). What is in flight is kept in its own
 * storage (src/apps/controller-marks.ts); its alarm is src/apps/controller-alarm.ts. D1 stays the
 * record of the app.
 */
export class AppController extends DurableObject<Env> {
  /** This start of the object: a mark made by another one belongs to work lost with it (controls.ts InFlightRecord.runner). */
  readonly #incarnation = crypto.randomUUID();
  readonly #marks = new ControllerMarks(this.ctx.storage.kv, this.env, this.#incarnation);
  readonly #alarm = new ControllerAlarm({
    env: this.env,
    storage: this.ctx.storage,
    marks: this.#marks,
    incarnation: this.#incarnation,
    runtime: () => this.#runtime(),
    failDeploy: (input) => this.failDeploy(input),
    restart: (input) => this.restart(input),
  });

  #runtime = (): ContainerRuntime | null => runtimeFor(this.env);

  /** What is in flight now, for the console (the deploy button's label). */
  inFlight(): InFlight {
    const current = this.#marks.inFlight();
    return current ? { kind: current.kind, deployId: current.deployId } : null;
  }

  /** Runs one control under the change mark (src/apps/controller-marks.ts). */
  #control<T>(control: Control, appId: string, now: number, run: (app: AppRow) => Promise<T>, options: ControlOptions = {}) {
    return this.#marks.control(control, appId, now, run, options);
  }

  /**
   * A verified push to the deploy branch: the same deploy as pressing Deploy, recorded as `push`,
   * refused before the first Deploy (src/webhooks/push.ts). A push seen before (by `push`, its key:
   * the ref and commits its signature covers, whatever delivery id came with it) answers
   * `duplicate` and starts nothing; the key is remembered before anything is awaited, so a replay
   * racing the original cannot pass either, and forgotten again when the deploy is refused.
   */
  async deployOnPush(input: { appId: string; deployId: string; now: number; push: string }): Promise<DeployResult | { outcome: "duplicate" }> {
    if (!this.#marks.rememberPush(input.push)) return { outcome: "duplicate" };
    const result = await this.deploy({ appId: input.appId, deployId: input.deployId, now: input.now, kind: "push" });
    if (result.outcome === "refused") this.#marks.forgetPush(input.push);
    return result;
  }

  /** Deploy / Redeploy: records the deploy and queues its job; the mark stays until the job reports back or its deadline passes. */
  async deploy(input: { appId: string; deployId: string; now: number; kind?: "deploy" | "push" }): Promise<DeployResult> {
    return this.#control(
      "deploy",
      input.appId,
      input.now,
      async (app) => {
        const started = await beginDeploy(this.env, app, this.#runtime(), input);
        if (started.outcome === "started") await this.#alarm.reschedule(input.now);
        return started;
      },
      { deployId: input.deployId, keepMark: true, queued: true },
    );
  }

  /**
   * The deploy's switch: the deploy goes live and the app moves to its new instance, as the one
   * compare-and-set on `replaces`, the instance the job found serving. `instance: null` is a
   * deploy of a stopped app: built only, the app stays stopped and Start runs the new version.
   * Not switched when the deploy is no longer the one in flight (failed meanwhile, app deleted).
   */
  async completeDeploy(input: { deployId: string; instance: Instance | null; replaces: string | null; envVersion: number; now: number }): Promise<SwitchOutcome> {
    const current = this.#marks.inFlight();
    if (current?.kind !== "deploy" || current.deployId !== input.deployId) return { switched: false, reason: "the deploy was no longer current." };
    const deploy = await deployById(this.env, input.deployId);
    const app = deploy && (await getApp(this.env, deploy.appId));
    const outcome: SwitchOutcome = deploy && app ? await goLive(this.env, deploy, app, input) : { switched: false, reason: "the app was deleted." };
    this.#marks.clear(current);
    // The replaced image stays for rollback; only images older than the last live deploys go (an
    // image its draining instance still runs goes at its retirement, src/apps/retire.ts).
    const runtime = this.#runtime();
    if (outcome.switched && runtime && deploy) await pruneImages(this.env, deploy.appId, runtime).catch((err: unknown) => log("warn", "images not pruned", { app_id: deploy.appId, ...describeError(err) }));
    if (outcome.switched) await notifyDeploy(this.env, input.deployId, input.now);
    await this.#alarm.reschedule(input.now);
    return outcome;
  }

  /** The deploy failed: recorded with its interpretation; a never-started app becomes `failed`. */
  async failDeploy(input: { deployId: string; failure: { kind: string; message: string }; now: number }): Promise<void> {
    const deploy = await deployById(this.env, input.deployId);
    const current = this.#marks.inFlight();
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
    if (ours) this.#marks.clear(ours);
    await this.#alarm.reschedule(Date.now());
  }

  override async alarm(): Promise<void> {
    await this.tick(Date.now());
  }

  /** The alarm's work at `now` (src/apps/controller-alarm.ts). */
  async tick(now: number): Promise<void> {
    await this.#alarm.tick(now);
  }

  /** Stop: the app goes offline, settings kept; billing rule 3's stopped clock starts (src/apps/app-changes.ts). */
  stop(input: { appId: string; now: number }): Promise<ControlResult> {
    return this.#engineControl("stop", input, (host, app) => stopApp(host, app, input.now));
  }

  /** Start: the app returns on its current plan, as a new instance of its live image. */
  start(input: { appId: string; now: number }): Promise<ControlResult> {
    return this.#engineControl("start", input, (host, app) => startApp(host, app, input.now));
  }

  /** Restart: the same instance restarted in place, no rebuild. */
  restart(input: { appId: string; now: number }): Promise<ControlResult> {
    return this.#engineControl("restart", input, (host, app) => restartApp(host, app, input.now));
  }

  /** Change plan, with the custom domains' check made under the mark: PLAN_REQUIRED while the app has domains the plan does not allow. */
  changePlan(input: { appId: string; plan: PlanId; now: number }): Promise<ControlResult> {
    return this.#control("plan", input.appId, input.now, (app) => changeAppPlan({ ...this.#host(), runtime: this.#runtime() }, app, input.plan)) as Promise<ControlResult>;
  }

  /** Settings (name, repository, build paths, subdomain): checked against the record as it is now, with the mark held. */
  async changeSettings(input: { appId: string; settings: z.output<typeof AppSettingsRequest>; now: number }): Promise<SettingsOutcome | Refusal> {
    const outcome = (await this.#control("settings", input.appId, input.now, (app) => changeAppSettings(this.env, app, input.settings))) as SettingsOutcome | Refusal;
    if ("ok" in outcome && outcome.ok && input.settings.health_check !== undefined) {
      // A new health check is tried at once, not at the end of the interval.
      this.#alarm.checkHealthSoon();
      await this.#alarm.reschedule(input.now);
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
    if (this.#marks.inFlight()) return { outcome: "refused", code: "DEPLOY_IN_PROGRESS", message: DEPLOY_IN_PROGRESS_MESSAGE };
    const mark: InFlightRecord = { kind: "env", appId: input.appId, since: input.now, runner: this.#incarnation };
    this.#marks.mark(mark, input.appId);
    let apply: EnvApplyRunner | null = null;
    try {
      const saved = await saveEnvSet(this.env, input);
      if ("apply" in saved) apply = saved.apply;
      return saved.outcome === "saved" ? { outcome: "saved", version: saved.version, effect: saved.effect } : saved;
    } finally {
      if (apply) {
        await this.#alarm.reschedule(input.now);
        // The switch runs on in this object; the mark names this incarnation, so a restart that loses
        // the run is noticed by the next alarm (src/apps/runner-watch.ts), and the deadline stays the last resort.
        this.ctx.waitUntil(
          apply().then(async () => {
            this.#marks.clear(mark);
            await this.#alarm.reschedule(Date.now());
          }),
        );
      } else this.#marks.clear(mark);
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
        const steps: RollbackSteps = { complete: (step) => this.completeDeploy(step), fail: (step) => this.failDeploy(step) };
        const prepared = await prepareRollback(this.env, { app, targetId: input.targetId, deployId: input.deployId, now: input.now, runtime });
        if ("outcome" in prepared) return prepared;
        if (prepared.plan === "repoint") await repointStopped(prepared, steps, input.now);
        else {
          await this.#alarm.reschedule(input.now);
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
    if ((await this.ctx.storage.getAlarm()) === null) await this.#alarm.reschedule(Date.now());
    if (this.#marks.inFlight()) {
      await this.ctx.storage.setAlarm(Date.now());
      return { outcome: "busy" };
    }
    const runtime = this.#runtime();
    if (!input.look || !runtime) return { outcome: "done", actions: [] };
    const mark: InFlightRecord = { kind: "reconcile", since: input.now, runner: this.#incarnation };
    this.#marks.mark(mark, input.appId);
    try {
      return { outcome: "done", actions: await this.#reconcileObjects(runtime, input.appId, input.now) };
    } finally {
      this.#marks.clear(mark);
    }
  }

  /** The reconciler's look at one app, with a change mark already held by the caller. */
  #reconcileObjects(runtime: ContainerRuntime, appId: string, now: number) {
    return reconcileAppObjects(this.env, runtime, appId, now, () => restoreRunning({ ...this.#host(), runtime }, appId, now));
  }

  /** What a control acting on the engine is lent: the engine, and the alarm to set again after a switch. */
  #host(): Omit<ChangeHost, "runtime"> {
    return { env: this.env, reschedule: () => this.#alarm.reschedule(Date.now()) };
  }

  #engineControl(control: "stop" | "start" | "restart", input: { appId: string; now: number }, run: (host: ChangeHost, app: AppRow) => Promise<ControlResult>): Promise<ControlResult> {
    return this.#control(control, input.appId, input.now, async (app) => {
      const runtime = this.#runtime();
      if (!runtime) return NO_ENGINE;
      return run({ ...this.#host(), runtime }, app);
    }) as Promise<ControlResult>;
  }
}

/** The controller of an app. */
export function appController(env: Env, appId: string) {
  return env.APP.get(env.APP.idFromName(appId));
}
