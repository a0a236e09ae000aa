import { DurableObject } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { getConfig } from "../config";
import { database } from "../db/client";
import { apps, deploys } from "../db/schema";
import { removeAppDomains } from "../domains/service";
import { describeError, log } from "../http/log";
import { appNetworkName, runtimeFor, runtimeFromUrl } from "../runtime";
import type { Instance } from "../runtime/types";
import { type Control, type ControlDecision, type InFlight, decideControl } from "./controls";
import { deleteAppLogs } from "./deploy-log";
import { APP_ID_LABEL, appImageRepository, launchInstance } from "./launch";
import type { DeployJobMessage } from "./messages";
import type { PlanId } from "./plans";
import { type AppRow, getApp } from "./store";
import { RENEWAL_RETRY_MS, renewIfDue, renewalTime } from "../billing/renewal";
import { recordDeploy, recordStart, startRefusal, stopColumns } from "../billing/app-events";
import { type EnvApplyRunner, type EnvSaveResult, ENV_APPLY_DEADLINE_MS, envApplyTimedOut, saveEnvSet } from "../envvars/save";
import type { EnvVariable } from "../envvars/rules";
import { launchEnv } from "../envvars/store";

/** A deploy that has not reported back by then is marked failed (its job crashed or was lost). */
export const DEPLOY_DEADLINE_MS = 30 * 60 * 1000;
/** How long the old instance keeps serving requests already sent to it after a switch. */
export const DRAIN_MS = 2000;

type Refusal =
  | Extract<ControlDecision, { outcome: "refused" }>
  | { outcome: "refused"; code: "ENGINE_UNAVAILABLE" | "LAUNCH_FAILED" | "INSUFFICIENT_FUNDS"; message: string };
export type ControlResult = { outcome: "done" } | Refusal;
export type DeployResult = { outcome: "started" | "already_deploying"; deployId: string } | Refusal;

interface InFlightRecord {
  kind: Control | "env";
  deployId?: string;
  /** The app, for a variable set being applied (the deadline alarm records its failure). */
  appId?: string;
  since: number;
}

/** SPEC.md, Errors "Console save conflicts": another change being applied. */
export const DEPLOY_IN_PROGRESS_MESSAGE = "A deployment is in progress. Try again in a moment.";

const NO_ENGINE: Refusal = {
  outcome: "refused",
  code: "ENGINE_UNAVAILABLE",
  message: "No container engine is configured. Set RUNTIME_URL to the Docker Engine API address (npm start does this when Docker runs on the machine).",
};

/**
 * One per app (named by the app id): the one place where changes to an app are serialised. It
 * keeps what is in flight in its own storage, read and written with the synchronous API so that
 * no other call can slip in between the decision and the mark. D1 stays the record of the app.
 */
export class AppController extends DurableObject<Env> {
  #inFlight(): InFlightRecord | null {
    return this.ctx.storage.kv.get<InFlightRecord>("in_flight") ?? null;
  }

  #clear(deployId?: string): void {
    const current = this.#inFlight();
    if (current && (deployId === undefined || current.deployId === deployId)) this.ctx.storage.kv.delete("in_flight");
  }

  /** What is in flight now, for the console (the deploy button's label). */
  inFlight(): InFlight {
    const current = this.#inFlight();
    return current ? { kind: current.kind, deployId: current.deployId } : null;
  }

  /**
   * Runs one control: refuses it while another change is in flight or when the app's state does
   * not allow it (SPEC.md, App controls), else marks it in flight and runs it. The mark is made
   * before the app is read from D1, so a second press arriving meanwhile is refused.
   */
  async #control<T>(control: Control, appId: string, now: number, run: (app: AppRow) => Promise<T>, options: { deployId?: string; keepMark?: boolean } = {}): Promise<T | Refusal | Extract<ControlDecision, { outcome: "already_deploying" }>> {
    const current = this.#inFlight();
    if (current) {
      const decision = decideControl(control, "not_deployed", current);
      if (decision.outcome !== "go") return decision;
    }
    this.ctx.storage.kv.put<InFlightRecord>("in_flight", { kind: control, deployId: options.deployId, since: now });
    this.ctx.storage.kv.put("app_id", appId);
    let keep = false;
    try {
      const app = await getApp(this.env, appId);
      if (!app) throw new Error(`app ${appId} has no record`);
      const decision = decideControl(control, app.status, null);
      if (decision.outcome !== "go") return decision;
      const result = await run(app);
      // A refused run (no funds, no engine) leaves nothing in flight.
      keep = options.keepMark === true && !isRefusal(result);
      return result;
    } finally {
      if (!keep) this.#clear();
    }
  }

  /**
   * Deploy / Redeploy: records the deploy and queues its job; the mark stays until the job
   * reports back (completeDeploy / failDeploy) or the deadline alarm fires.
   */
  async deploy(input: { appId: string; deployId: string; now: number }): Promise<DeployResult> {
    const result = await this.#control(
      "deploy",
      input.appId,
      input.now,
      async (app) => {
        // Billing rules 1-2: the first deploy is charged before the build starts, or refused. With
        // no engine configured the deploy fails at once, the service's fault: nothing is charged.
        const engine = getConfig(this.env).RUNTIME_URL !== "";
        const billed = await recordDeploy(this.env, app, input.deployId, input.now, { charge: engine });
        if (!billed.ok) return { outcome: "refused" as const, code: billed.code, message: billed.message };
        await this.env.DEPLOY_JOBS.send({ appId: app.id, deployId: input.deployId } satisfies DeployJobMessage);
        await this.#reschedule(input.now);
        return { outcome: "started" as const, deployId: input.deployId };
      },
      { deployId: input.deployId, keepMark: true },
    );
    return result;
  }

  /**
   * The deploy job's new instance answered: switch traffic to it in one D1 batch (the deploy
   * live, the one before superseded, the app running on the new instance). Returns the instance
   * that served before, for the job to stop once it has drained; null when the deploy is no
   * longer the one in flight (it was already marked failed).
   */
  async completeDeploy(input: { deployId: string; instance: Instance; envVersion: number; now: number }): Promise<{ previous: { instanceId: string | null; image: string | null } } | null> {
    const current = this.#inFlight();
    if (current?.kind !== "deploy" || current.deployId !== input.deployId) return null;
    const db = database(this.env);
    const deploy = await db.select().from(deploys).where(eq(deploys.id, input.deployId)).get();
    const app = deploy && (await getApp(this.env, deploy.appId));
    if (!deploy || !app) {
      this.#clear(input.deployId);
      return null;
    }
    const statements = [
      db.update(deploys).set({ status: "live", finishedAt: input.now, instanceId: input.instance.id }).where(eq(deploys.id, deploy.id)),
      db
        .update(apps)
        .set({
          status: "running",
          instanceId: input.instance.id,
          instanceUrl: input.instance.url,
          image: deploy.image,
          liveDeployId: deploy.id,
          port: deploy.port,
          portSource: deploy.portSource,
          portReason: deploy.portReason,
          envAppliedVersion: input.envVersion,
        })
        .where(eq(apps.id, app.id)),
    ] as const;
    await db.batch(
      app.liveDeployId
        ? [...statements, db.update(deploys).set({ status: "superseded" }).where(and(eq(deploys.id, app.liveDeployId), eq(deploys.status, "live")))]
        : statements,
    );
    this.#clear(input.deployId);
    await this.#reschedule(Date.now());
    return { previous: { instanceId: app.instanceId, image: app.image } };
  }

  /** The deploy failed: recorded with its interpretation; a never-started app becomes `failed`. */
  async failDeploy(input: { deployId: string; failure: { kind: string; message: string }; now: number }): Promise<void> {
    const db = database(this.env);
    const deploy = await db.select().from(deploys).where(eq(deploys.id, input.deployId)).get();
    if (deploy && (deploy.status === "building" || deploy.status === "starting")) {
      await db.batch([
        db.update(deploys).set({ status: "failed", finishedAt: input.now, failure: input.failure }).where(eq(deploys.id, deploy.id)),
        db.update(apps).set({ status: "failed" }).where(and(eq(apps.id, deploy.appId), eq(apps.status, "not_deployed"))),
      ]);
    }
    this.#clear(input.deployId);
    await this.#reschedule(Date.now());
  }

  override async alarm(): Promise<void> {
    await this.tick(Date.now());
  }

  /**
   * The alarm's work at `now`: a deploy or variable switch that never reported back by its deadline
   * is failed (so the app is never left `Deploying…`), and a paid period that has ended is renewed
   * (src/billing/renewal.ts). Then the next alarm is set for whichever comes first.
   */
  async tick(now: number): Promise<void> {
    const current = this.#inFlight();
    if (current?.kind === "env" && now >= current.since + ENV_APPLY_DEADLINE_MS) {
      if (current.appId) await envApplyTimedOut(this.env, current.appId, now);
      this.#clear();
    } else if (current?.kind === "deploy" && current.deployId && now >= current.since + DEPLOY_DEADLINE_MS) {
      log("warn", "deploy passed its deadline; marked failed", { deploy_id: current.deployId });
      await this.failDeploy({
        deployId: current.deployId,
        failure: { kind: "interrupted", message: "The deploy did not finish in time and was stopped. Deploy again." },
        now,
      });
    }
    const appId = this.ctx.storage.kv.get<string>("app_id");
    if (appId && !this.#inFlight()) await renewIfDue(this.env, appId, now, runtimeFor(this.env));
    await this.#reschedule(now);
  }

  /**
   * One alarm for everything timed: the in-flight change's deadline and the end of the paid period
   * of a running app. A renewal that falls due while a change is in flight waits for it.
   */
  async #reschedule(now: number): Promise<void> {
    const times: number[] = [];
    const current = this.#inFlight();
    if (current?.kind === "deploy") times.push(current.since + DEPLOY_DEADLINE_MS);
    if (current?.kind === "env") times.push(current.since + ENV_APPLY_DEADLINE_MS);
    const appId = this.ctx.storage.kv.get<string>("app_id");
    const app = appId ? await getApp(this.env, appId) : undefined;
    const renewAt = app ? renewalTime(app) : null;
    if (renewAt !== null) times.push(current ? Math.max(renewAt, now + RENEWAL_RETRY_MS) : renewAt);
    if (times.length === 0) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.min(...times));
  }

  /** Stop: the app goes offline, settings kept. */
  stop(input: { appId: string; now: number }): Promise<ControlResult> {
    return this.#engineControl("stop", input, async (app, runtime) => {
      if (app.instanceId) await runtime.stop(app.instanceId);
      // Billing rule 3: the stopped clock starts with the stop.
      await database(this.env).update(apps).set(stopColumns(app, input.now)).where(eq(apps.id, app.id));
      return { outcome: "done" };
    });
  }

  /** Start: the app returns on its current plan, as a new instance of the same image. */
  start(input: { appId: string; now: number }): Promise<ControlResult> {
    return this.#engineControl("start", input, async (app, runtime) => {
      // Billing rule 4 (or a fresh period after a renewal could not be paid): refused before anything runs.
      const affordable = await startRefusal(this.env, app, input.now);
      if (!affordable.ok) return { outcome: "refused", code: affordable.code, message: affordable.message };
      const launched = await this.#launch(app, runtime, app.plan as PlanId);
      if (!launched.ok) return launched.refusal;
      const billed = await recordStart(this.env, app, input.now, {
        instanceId: launched.instance.id,
        instanceUrl: launched.instance.url,
        envAppliedVersion: launched.envVersion,
      });
      if (!billed.ok) {
        await runtime.remove(launched.instance.id).catch(() => undefined);
        return { outcome: "refused", code: billed.code, message: billed.message };
      }
      await this.#reschedule(input.now);
      if (app.instanceId) await runtime.remove(app.instanceId).catch(() => undefined);
      return { outcome: "done" };
    });
  }

  /** Restart: the same instance restarted in place, no rebuild. */
  restart(input: { appId: string; now: number }): Promise<ControlResult> {
    return this.#engineControl("restart", input, async (app, runtime) => {
      if (!app.instanceId) return { outcome: "refused", code: "INVALID_STATE", message: "The app has no instance to restart." };
      const instance = await runtime.restart(app.instanceId);
      await database(this.env).update(apps).set({ instanceUrl: instance.url }).where(eq(apps.id, app.id));
      return { outcome: "done" };
    });
  }

  /**
   * Change plan: a running app moves to a new instance with the plan's limits (traffic switches
   * once it answers; the old one stops after draining); a stopped or undeployed app only records
   * the plan, applied at its next start or deploy.
   */
  changePlan(input: { appId: string; plan: PlanId; now: number }): Promise<ControlResult> {
    return this.#control("plan", input.appId, input.now, async (app): Promise<ControlResult> => {
      const db = database(this.env);
      if (app.status !== "running" || !app.image) {
        await db.update(apps).set({ plan: input.plan }).where(eq(apps.id, app.id));
        return { outcome: "done" };
      }
      const runtime = runtimeFor(this.env);
      if (!runtime) return NO_ENGINE;
      const launched = await this.#launch(app, runtime, input.plan);
      if (!launched.ok) return launched.refusal;
      await db
        .update(apps)
        .set({ plan: input.plan, instanceId: launched.instance.id, instanceUrl: launched.instance.url, envAppliedVersion: launched.envVersion })
        .where(eq(apps.id, app.id));
      if (app.instanceId) await this.#retire(runtime, app.instanceId);
      return { outcome: "done" };
    }) as Promise<ControlResult>;
  }

  /**
   * Saves an app's whole variable set (SPEC.md, contract item 6, save conflicts): refused while any
   * change is in flight; the mark is taken synchronously before anything is read, so two saves
   * never interleave. When the app is serving, a new instance with the new set takes over in the
   * background and the mark stays until it has (or has failed; the old instance then keeps serving).
   * The background run keeps the object alive (compatibility date 2026-10-01 or later: pending
   * waitUntil promises and timers prevent eviction); the deadline alarm covers a run lost anyway.
   */
  async saveEnv(input: { appId: string; version: number; variables: EnvVariable[]; now: number }): Promise<EnvSaveResult> {
    if (this.#inFlight()) return { outcome: "refused", code: "DEPLOY_IN_PROGRESS", message: DEPLOY_IN_PROGRESS_MESSAGE };
    const mark: InFlightRecord = { kind: "env", appId: input.appId, since: input.now };
    this.ctx.storage.kv.put<InFlightRecord>("in_flight", mark);
    this.ctx.storage.kv.put("app_id", input.appId);
    let apply: EnvApplyRunner | null = null;
    try {
      const saved = await saveEnvSet(this.env, input, { drainMs: DRAIN_MS });
      if ("apply" in saved) apply = saved.apply;
      return saved.outcome === "saved" ? { outcome: "saved", version: saved.version, effect: saved.effect } : saved;
    } finally {
      if (apply) {
        await this.#reschedule(input.now);
        this.ctx.waitUntil(apply().then(() => this.#endEnvApply(mark)));
      } else this.#clearEnv(mark);
    }
  }

  /** Clears the mark of a variable save, unless it already gave way (its deadline passed meanwhile). */
  #clearEnv(mark: InFlightRecord): boolean {
    const current = this.#inFlight();
    if (current?.kind !== "env" || current.since !== mark.since) return false;
    this.ctx.storage.kv.delete("in_flight");
    return true;
  }

  /** The switch ended: its mark is cleared (unless its deadline already passed) and the alarm set for what is left. */
  async #endEnvApply(mark: InFlightRecord): Promise<void> {
    if (this.#clearEnv(mark)) await this.#reschedule(Date.now());
  }

  /** Delete: instance, images, logs and record removed; cannot be undone. */
  async delete(input: { appId: string; now: number }): Promise<ControlResult> {
    const result = (await this.#control("delete", input.appId, input.now, async (app): Promise<ControlResult> => {
      const runtime = runtimeFor(this.env);
      const db = database(this.env);
      const images = await db.select({ image: deploys.image, instanceId: deploys.instanceId }).from(deploys).where(eq(deploys.appId, app.id));
      if (runtime) {
        // What the records name, and what the engine itself holds for the app: an old instance
        // whose removal after a switch never ran (its job or object was interrupted while it
        // drained) is named by no record.
        const [running, tagged] = await Promise.all([runtime.instances({ [APP_ID_LABEL]: app.id }), runtime.images(appImageRepository(app.id))]);
        for (const id of new Set([app.instanceId, ...images.map((d) => d.instanceId), ...running])) if (id) await runtime.remove(id);
        for (const image of new Set([app.image, ...images.map((d) => d.image), ...tagged])) if (image) await runtime.removeImage(image);
        // A network some unlabelled container still uses stays behind rather than block Delete.
        await runtime.removeNetwork(appNetworkName(app.id)).catch((err: unknown) => log("warn", "app network not removed", { app_id: app.id, ...describeError(err) }));
      }
      await deleteAppLogs(this.env.LOGS, app.id);
      await removeAppDomains(this.env, app.id);
      await db.delete(apps).where(eq(apps.id, app.id));
      return { outcome: "done" };
    })) as ControlResult;
    if (result.outcome === "done") await this.ctx.storage.deleteAll();
    return result;
  }

  #engineControl(control: "stop" | "start" | "restart", input: { appId: string; now: number }, run: (app: AppRow, runtime: NonNullable<ReturnType<typeof runtimeFromUrl>>) => Promise<ControlResult>): Promise<ControlResult> {
    return this.#control(control, input.appId, input.now, async (app) => {
      const runtime = runtimeFor(this.env);
      if (!runtime) return NO_ENGINE;
      return run(app, runtime);
    }) as Promise<ControlResult>;
  }

  async #launch(app: AppRow, runtime: NonNullable<ReturnType<typeof runtimeFromUrl>>, plan: PlanId): Promise<{ ok: true; instance: Instance; envVersion: number } | { ok: false; refusal: Refusal }> {
    if (!app.image || app.port === null || !app.liveDeployId) {
      return { ok: false, refusal: { outcome: "refused", code: "INVALID_STATE", message: "The app has no built image yet. Deploy it first." } };
    }
    const variables = await launchEnv(this.env, app.id);
    const launched = await launchInstance(
      runtime,
      { appId: app.id, image: app.image, port: app.port, portReason: app.portReason ?? "", plan, env: variables.env, deployId: app.liveDeployId },
      { probeTimeoutSeconds: getConfig(this.env).PROBE_TIMEOUT_SECONDS },
    );
    if (launched.ok) return { ...launched, envVersion: variables.version };
    log("warn", "instance launch failed", { app_id: app.id, kind: launched.kind });
    return { ok: false, refusal: { outcome: "refused", code: "LAUNCH_FAILED", message: launched.message } };
  }

  /** Stops and removes an instance that no longer serves, after requests already sent to it end. */
  async #retire(runtime: NonNullable<ReturnType<typeof runtimeFromUrl>>, instanceId: string): Promise<void> {
    await new Promise((r) => setTimeout(r, DRAIN_MS));
    await runtime.remove(instanceId).catch((err: unknown) => log("warn", "old instance not removed", { instance_id: instanceId, ...describeError(err) }));
  }
}

function isRefusal(result: unknown): boolean {
  return typeof result === "object" && result !== null && (result as { outcome?: string }).outcome === "refused";
}

/** The controller of an app. */
export function appController(env: Env, appId: string) {
  return env.APP.get(env.APP.idFromName(appId));
}
