import { log as serviceLog } from "../http/log";
import { appNetworkName } from "../runtime";
import { type ContainerRuntime, type Instance, InstanceExitedError, RuntimeUnavailableError } from "../runtime/types";
import { type HealthCheckSettings, engineHealthCheck, healthSettings } from "./health";
import { type PlanId, planLimits } from "./plans";
import { probeInstance } from "./probe";

/** The label every instance of an app carries, with the app id: how the engine's own list finds them. */
export const APP_ID_LABEL = "control-plane.app_id";
/** The label naming the deploy whose image an instance runs. */
export const DEPLOY_ID_LABEL = "control-plane.deploy_id";

/** The image name of an app; each deploy tags it with the deploy id. */
export function appImageRepository(appId: string): string {
  return `control-plane/app-${appId}`;
}

/** What a new instance of an app needs: the image, its port, its plan, its variables. */
export interface LaunchSpec {
  appId: string;
  image: string;
  port: number;
  /** Where the port came from, for the failure sentence ("first EXPOSE line, 3000"). */
  portReason: string;
  plan: PlanId;
  /** The app's environment variables (docs/apps.md, contract 2: no `PORT` is set). */
  env: Record<string, string>;
  /** The deploy that built the image, for the instance's labels. */
  deployId: string;
  /**
   * The health check the app set: the probe after start uses it, and an engine that checks health
   * itself (Swarm) gets it as the task's Healthcheck. Absent (the app never set one): the Worker's
   * probe uses the defaults (any answer on `/`) and the engine is given no check, since an image
   * may have no shell or wget to run one with.
   */
  healthCheck?: HealthCheckSettings;
}

/** The spec of a new instance of an app's live image on `plan`; null before its first build. */
export function liveSpec(
  app: { id: string; image: string | null; port: number | null; portReason: string | null; liveDeployId: string | null; healthCheck?: HealthCheckSettings | null },
  plan: PlanId,
  env: Record<string, string>,
): LaunchSpec | null {
  if (!app.image || app.port === null || !app.liveDeployId) return null;
  return { appId: app.id, image: app.image, port: app.port, portReason: app.portReason ?? "", plan, env, deployId: app.liveDeployId, ...(app.healthCheck ? { healthCheck: app.healthCheck } : {}) };
}

export type LaunchOutcome = { ok: true; instance: Instance } | { ok: false; kind: "probe_failed" | "start_failed"; message: string };

/** docs/apps.md, failed-deploy messages: "the container started but nothing answered on the probed port". */
export function probeFailedMessage(port: number, portReason: string, timeoutSeconds: number): string {
  return `The container started but nothing answered on port ${port} (${portReason}) within ${timeoutSeconds} s. The process must listen on 0.0.0.0:${port}, not 127.0.0.1.`;
}

/** The same with the app's own health check: what its last try found (no body, no address). */
export function healthProbeFailedMessage(port: number, timeoutSeconds: number, lastError: string): string {
  return `The container started but its health check on port ${port} did not pass within ${timeoutSeconds} s: ${lastError}`;
}

/**
 * Runs the next generation of the app's instance (`runtime.replace` of `replaces`, the app's
 * current instance, if any) and waits until its port answers. A generation that does not answer
 * is reverted (`runtime.revert`: a new instance is removed, one switched in place goes back to
 * what it ran before), so a failed launch leaves whatever served before serving.
 */
export async function launchInstance(
  runtime: ContainerRuntime,
  spec: LaunchSpec,
  options: { probeTimeoutSeconds: number; healthIntervalSeconds?: number; log?: (text: string) => Promise<void>; replaces?: string | null },
): Promise<LaunchOutcome> {
  const log = options.log ?? (async () => undefined);
  const check = healthSettings(spec.healthCheck);
  // The grace period at start lengthens the wait for a first answer; it never shortens it.
  const probeSeconds = Math.max(options.probeTimeoutSeconds, check.graceSeconds);
  const previous = options.replaces ?? null;
  // A generation that did not take: nothing of it is left, and what ran before runs as before.
  const discard = (id: string) => runtime.revert(id, previous).catch(() => undefined);
  let instance: Instance;
  try {
    const instanceSpec = {
      image: spec.image,
      name: `cp-${spec.appId.slice(0, 8)}-${crypto.randomUUID().slice(0, 8)}`,
      labels: { [APP_ID_LABEL]: spec.appId, [DEPLOY_ID_LABEL]: spec.deployId },
      env: spec.env,
      port: spec.port,
      limits: planLimits(spec.plan),
      network: appNetworkName(spec.appId),
      ...(spec.healthCheck ? { healthCheck: engineHealthCheck(check, options.healthIntervalSeconds) } : {}),
    };
    instance = await runtime.replace(previous, instanceSpec);
  } catch (err) {
    if (err instanceof RuntimeUnavailableError) {
      // Whatever the engine did with `previous` (switched in place) is undone; one engine did nothing to it.
      if (previous) await discard(previous);
      throw err;
    }
    if (err instanceof InstanceExitedError) {
      const output = await runtime.logs(err.instanceId, { tail: 100 }).catch(() => "");
      if (output) await log(`Instance output:\n${output.replace(/\n$/, "")}`);
      await discard(err.instanceId);
    }
    const message = `The container could not be started: ${err instanceof Error ? err.message : String(err)}`;
    await log(message);
    return { ok: false, kind: "start_failed", message };
  }
  const what = check.path === "/" && check.expect === "any" ? "" : ` at ${check.path} (expecting ${check.expect === "any" ? "any answer" : "2xx-3xx"})`;
  await log(`Started instance ${instance.id.slice(0, 12)}; probing port ${spec.port} (${spec.portReason})${what} for up to ${probeSeconds} s`);
  const probe = await probeInstance(instance.url, { timeoutMs: probeSeconds * 1000, check });
  if (probe.answered) {
    await log(`Port ${spec.port} answered HTTP ${probe.status}${check.path === "/" ? "" : ` at ${check.path}`}`);
    return { ok: true, instance };
  }
  const output = await runtime.logs(instance.id, { tail: 100 }).catch(() => "");
  if (output) await log(`Instance output:\n${output}`);
  await discard(instance.id);
  const message = check.path === "/" && check.expect === "any" ? probeFailedMessage(spec.port, spec.portReason, probeSeconds) : healthProbeFailedMessage(spec.port, probeSeconds, probe.lastError);
  await log(message);
  return { ok: false, kind: "probe_failed", message };
}

/**
 * How an instance that no longer serves is retired (ARCHITECTURE.md: a switch drops no request):
 * the switch writes its retire row (src/apps/retire-ledger.ts) and it keeps answering what was
 * already sent to it for `drainSeconds` (DRAIN_SECONDS); then the controller's alarm stops it with
 * `graceSeconds` (STOP_GRACE_SECONDS) to exit before it is killed, and removes it (src/apps/retire.ts).
 */
export interface RetirePolicy {
  drainSeconds: number;
  graceSeconds: number;
}

/** The shortest drain a setting may ask for: longer than the proxy remembers a route (src/routing/route-cache.ts). */
export const MIN_DRAIN_SECONDS = 2;

export function retirePolicy(config: { DRAIN_SECONDS: number; STOP_GRACE_SECONDS: number }): RetirePolicy {
  return { drainSeconds: Math.max(MIN_DRAIN_SECONDS, config.DRAIN_SECONDS), graceSeconds: config.STOP_GRACE_SECONDS };
}

/** The instance a switch replaced (its retire row was written with the switch). */
export interface Replaced {
  instanceId: string | null;
  image: string | null;
  /** It was answering requests (a stopped one has nothing to drain). */
  serving: boolean;
}

/** What the switch step answers: it moved the app to the new instance, or it found another change had. */
export type SwitchOutcome = { switched: true; replaced: Replaced } | { switched: false; reason: string };

export interface LaunchAndSwitch {
  runtime: ContainerRuntime;
  /** The new instance: image, port, plan, variables (src/runtime's settings per plan come through here). */
  spec: LaunchSpec;
  probeTimeoutSeconds: number;
  /** HEALTH_CHECK_INTERVAL_SECONDS, for an engine that checks health itself. */
  healthIntervalSeconds?: number;
  /** The change's own log (a deploy's log, a variable save's check log). */
  log?: (text: string) => Promise<void>;
  /** Runs once traffic is switched (a deploy writes out its log so far). */
  afterSwitch?: () => Promise<void>;
  /**
   * Points the app at the new instance as a compare-and-set on the instance it replaces, writing
   * in the same D1 batch the replaced instance's retire row and whatever the change pays or
   * records with it. Not switched: another change got there.
   */
  switchTo: (instance: Instance) => Promise<SwitchOutcome>;
  /** The app's current instance (serving or stopped), of which the new instance is the next generation (`runtime.replace`). */
  replaces?: string | null;
}

export type LaunchAndSwitchOutcome =
  | { ok: true; instance: Instance; replaced: Replaced }
  | { ok: false; kind: "probe_failed" | "start_failed"; message: string }
  | { ok: false; kind: "not_switched"; message: string };

/**
 * Every change that puts a new instance in front of an app (deploy, change plan, start, variables
 * applied): launch the new instance, probe it, switch traffic to it only if the app still runs the
 * instance it replaces. The switch's own batch records the old instance in the retire ledger, and
 * the controller's alarm drains and removes it (src/apps/retire.ts): nothing of the retirement is
 * left to this call, so a runner that dies after the switch loses nothing. A failed launch leaves
 * the old instance serving; a late finisher (the app moved on meanwhile) changes nothing, removes
 * its own instance and says so in its log.
 */
export async function launchAndSwitch(input: LaunchAndSwitch): Promise<LaunchAndSwitchOutcome> {
  const log = input.log ?? (async () => undefined);
  const launched = await launchInstance(input.runtime, input.spec, { probeTimeoutSeconds: input.probeTimeoutSeconds, healthIntervalSeconds: input.healthIntervalSeconds, log, replaces: input.replaces ?? null });
  if (!launched.ok) return launched;
  const switched = await input.switchTo(launched.instance);
  if (!switched.switched) {
    const inPlace = launched.instance.id === input.replaces;
    await input.runtime.revert(launched.instance.id, input.replaces ?? null).catch(() => undefined);
    const message = `Not switched: ${switched.reason} Instance ${launched.instance.id.slice(0, 12)} was ${inPlace ? "put back on what it ran before" : "removed"}; nothing changed.`;
    await log(message);
    serviceLog("info", "launch finished late; nothing switched", { app_id: input.spec.appId, instance_id: launched.instance.id });
    return { ok: false, kind: "not_switched", message };
  }
  await log(`Live: traffic switched to instance ${launched.instance.id.slice(0, 12)}`);
  await input.afterSwitch?.();
  const old = switched.replaced.instanceId;
  // Replaced in place: the engine itself stopped the old generation once the new one ran.
  if (old && old === launched.instance.id) await log(`Previous generation of instance ${old.slice(0, 12)} stopped by the engine`);
  else if (old) await log(`Previous instance ${old.slice(0, 12)} ${switched.replaced.serving ? "drains, then is stopped and removed" : "is removed"}`);
  return { ok: true, instance: launched.instance, replaced: switched.replaced };
}
