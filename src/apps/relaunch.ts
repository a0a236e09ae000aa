import { type Config, getConfig } from "../config";
import { launchEnv } from "../envvars/store";
import type { ContainerRuntime, Instance } from "../runtime/types";
import { type LaunchAndSwitchOutcome, type LaunchSpec, type RetirePolicy, type SwitchOutcome, launchAndSwitch, liveSpec, retirePolicy } from "./launch";
import type { PlanId } from "./plans";
import { type NewRetireRow, type ReplacedApp, retireRowFor } from "./retire-ledger";
import type { AppRow } from "./store";

/** How every new instance is launched and the one it replaces retired, from the configuration. */
export interface LaunchOptions {
  /** PROBE_TIMEOUT_SECONDS: how long the new instance has to answer. */
  probeTimeoutSeconds: number;
  /** HEALTH_CHECK_INTERVAL_SECONDS, for an engine that checks health itself. */
  healthIntervalSeconds: number;
  /** DRAIN_SECONDS and STOP_GRACE_SECONDS (src/apps/launch.ts RetirePolicy). */
  retire: RetirePolicy;
}

export function launchOptions(config: Pick<Config, "PROBE_TIMEOUT_SECONDS" | "HEALTH_CHECK_INTERVAL_SECONDS" | "DRAIN_SECONDS" | "STOP_GRACE_SECONDS">): LaunchOptions {
  return { probeTimeoutSeconds: config.PROBE_TIMEOUT_SECONDS, healthIntervalSeconds: config.HEALTH_CHECK_INTERVAL_SECONDS, retire: retirePolicy(config) };
}

/** The retire row of the instance a switch to `instanceId` replaces now (null: nothing to retire); its drain starts at the switch. */
export function replacedRow(env: Env, app: ReplacedApp, instanceId: string): NewRetireRow | null {
  return retireRowFor(app, instanceId, Date.now(), launchOptions(getConfig(env)).retire.drainSeconds);
}

/** What a relaunch's switch is given: the variable set the instance started with and the replaced instance's retire row. */
export interface SwitchContext {
  envVersion: number;
  retire: NewRetireRow | null;
}

/** A change that puts a new instance in front of an app. */
export interface Change {
  /** The image to run when it is not the app's live one: a deploy's build, a rollback's earlier image. */
  image?: { image: string; port: number; portReason: string; deployId: string };
  /** The plan to run it on (Change plan); the app's own otherwise. */
  plan?: PlanId;
  /** The change's own log (a deploy's log, a variable save's check log). */
  log?: (text: string) => Promise<void>;
  /** Runs once traffic is switched (a deploy writes out its log so far). */
  afterSwitch?: () => Promise<void>;
  /** Moves the app to the new instance (src/apps/app-columns.ts switchInstance, or the controller's completeDeploy). */
  switchTo: (instance: Instance, context: SwitchContext) => Promise<SwitchOutcome>;
}

export type RelaunchOutcome = LaunchAndSwitchOutcome | { ok: false; kind: "no_image"; message: string };

export const NO_IMAGE_MESSAGE = "The app has no built image yet. Deploy it first.";

/**
 * The one path of every change that puts a new instance in front of an app (Deploy, Start, Change
 * plan, a variable set applied, Rollback, the reconciler's restore): the app's current variables,
 * the launch options from the configuration, and launch-and-switch (src/apps/launch.ts) with the
 * app's current instance as the one replaced.
 */
export function relaunch(env: Env, runtime: ContainerRuntime, app: AppRow, change: Change & Required<Pick<Change, "image">>): Promise<LaunchAndSwitchOutcome>;
export function relaunch(env: Env, runtime: ContainerRuntime, app: AppRow, change: Change): Promise<RelaunchOutcome>;
export async function relaunch(env: Env, runtime: ContainerRuntime, app: AppRow, change: Change): Promise<RelaunchOutcome> {
  const variables = await launchEnv(env, app.id);
  const spec = launchSpec(app, change, variables.env);
  if (!spec) return { ok: false, kind: "no_image", message: NO_IMAGE_MESSAGE };
  const options = launchOptions(getConfig(env));
  return launchAndSwitch({
    runtime,
    spec,
    replaces: app.instanceId,
    probeTimeoutSeconds: options.probeTimeoutSeconds,
    healthIntervalSeconds: options.healthIntervalSeconds,
    log: change.log,
    afterSwitch: change.afterSwitch,
    switchTo: (instance) => change.switchTo(instance, { envVersion: variables.version, retire: retireRowFor(app, instance.id, Date.now(), options.retire.drainSeconds) }),
  });
}

function launchSpec(app: AppRow, change: Change, env: Record<string, string>): LaunchSpec | null {
  const plan = change.plan ?? (app.plan as PlanId);
  if (!change.image) return liveSpec(app, plan, env);
  return { appId: app.id, ...change.image, plan, env, ...(app.healthCheck ? { healthCheck: app.healthCheck } : {}) };
}
