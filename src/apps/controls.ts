import type { AppStatus } from "../db/schema";
import { RENEWAL_RETRY_MS } from "../billing/renewal";
import { ENV_APPLY_DEADLINE_MS } from "../envvars/save";
import { RUNNER_CHECK_MS } from "./heartbeat";
import type { ContainerRuntime } from "../runtime/types";

/**
 * docs/apps.md, App controls: which control applies to which app state, and what a control pressed
 * while another change is in flight gets. Pure: the AppController asks it before doing anything.
 */
export const CONTROLS = ["deploy", "stop", "start", "restart", "plan", "settings", "delete"] as const;
export type Control = (typeof CONTROLS)[number];

/**
 * What the controller knows is being applied to the app right now (`env`: a saved variable set;
 * `renew`: the renewal of its paid period; `reconcile`: the reconciler's step, src/apps/reconcile.ts).
 */
export type InFlight = { kind: Control | "env" | "renew" | "reconcile"; deployId?: string } | null;

export type ControlDecision =
  | { outcome: "go" }
  /** Deploy pressed while a deploy runs: nothing new starts, the running deploy is the answer. */
  | { outcome: "already_deploying"; deployId: string }
  | { outcome: "refused"; code: "CHANGE_IN_FLIGHT" | "INVALID_STATE" | "DELETE_FAILED"; message: string };

export const CHANGE_IN_FLIGHT_MESSAGE = "Another change to this app is being applied. Try again in a moment.";
/** docs/apps.md, App controls: "Delete during a running deploy fails with a generic failure message." */
export const DELETE_FAILED_MESSAGE = "The app could not be deleted.";

/** The one state each control needs; a control absent here applies in any state. */
const NEEDS: Partial<Record<Control, { status: AppStatus; message: string }>> = {
  stop: { status: "running", message: "Only a running app can be stopped." },
  start: { status: "stopped", message: "Only a stopped app can be started." },
  restart: { status: "running", message: "Only a running app can be restarted." },
};

export function decideControl(control: Control, status: AppStatus, inFlight: InFlight): ControlDecision {
  if (inFlight) {
    if (control === "deploy" && inFlight.kind === "deploy" && inFlight.deployId) {
      return { outcome: "already_deploying", deployId: inFlight.deployId };
    }
    if (control === "delete" && inFlight.kind === "deploy") {
      return { outcome: "refused", code: "DELETE_FAILED", message: DELETE_FAILED_MESSAGE };
    }
    return { outcome: "refused", code: "CHANGE_IN_FLIGHT", message: CHANGE_IN_FLIGHT_MESSAGE };
  }
  const need = NEEDS[control];
  if (need && status !== need.status) return { outcome: "refused", code: "INVALID_STATE", message: need.message };
  return { outcome: "go" };
}

/** The label of the deploy button (docs/apps.md, App controls: `Deploy` / `Redeploy`, `Deploying…` while one runs). */
export function deployLabel(status: AppStatus, deploying: boolean): "Deploy" | "Redeploy" | "Deploying…" {
  if (deploying) return "Deploying…";
  return status === "not_deployed" ? "Deploy" : "Redeploy";
}

/**
 * The last resort behind the runner's heartbeat (src/apps/heartbeat.ts): a deploy that has not
 * reported back by then is marked failed whatever its heartbeat says (a runner that beats but hangs).
 */
export const DEPLOY_DEADLINE_MS = 30 * 60 * 1000;

export type Refusal =
  | Extract<ControlDecision, { outcome: "refused" }>
  | { outcome: "refused"; code: "ENGINE_UNAVAILABLE" | "LAUNCH_FAILED" | "INSUFFICIENT_FUNDS" | "INSUFFICIENT_CAPACITY" | "PLAN_REQUIRED"; message: string };
export type ControlResult = { outcome: "done" } | Refusal;
export type DeployResult = { outcome: "started" | "already_deploying"; deployId: string } | Refusal;

export interface InFlightRecord {
  kind: NonNullable<InFlight>["kind"];
  deployId?: string;
  /** The app, for a variable set being applied (the deadline alarm records its failure). */
  appId?: string;
  since: number;
  /**
   * The controller's incarnation (a random id per start of the object) running the change, when it
   * runs inside the object; absent for a deploy, whose job runs on the queue and beats its heartbeat
   * in D1. A mark whose incarnation is not the current one belongs to work the object lost when it
   * was restarted.
   */
  runner?: string;
  /** Times the deploy's job was handed to a new runner after its runner fell silent. */
  requeues?: number;
}

/** docs/envvars.md, rule 7 (save conflicts): another change being applied. */
export const DEPLOY_IN_PROGRESS_MESSAGE = "A deployment is in progress. Try again in a moment.";

export const NO_ENGINE: Refusal = {
  outcome: "refused",
  code: "ENGINE_UNAVAILABLE",
  message: "No container engine is configured. Set RUNTIME_URL to the Docker Engine API address (npm start does this when Docker runs on the machine).",
};
/**
 * Before an app's first deploy (it never went live), on an engine that reports its capacity
 * (a swarm): the plan's memory must fit on some machine now, else the deploy is refused with the
 * engine's sentence and nothing is charged. Null: go on.
 */
export async function capacityRefusal(
  runtime: Pick<ContainerRuntime, "capacity"> | null,
  app: { liveDeployId: string | null },
  planMemoryBytes: number,
): Promise<Refusal | null> {
  if (!runtime || app.liveDeployId !== null) return null;
  const verdict = await runtime.capacity(planMemoryBytes);
  return verdict.fits ? null : { outcome: "refused", code: "INSUFFICIENT_CAPACITY", message: verdict.message };
}

export const NOT_CURRENT = "another change to the app took over while this instance started.";
export const refusal = (billed: { code: "INSUFFICIENT_FUNDS"; message: string }): Refusal => ({ outcome: "refused", code: billed.code, message: billed.message });

/**
 * When the controller's one alarm fires next: a look at the in-flight change's runner every
 * RUNNER_CHECK_MS (and its deadline, the last resort), the renewal of a running app's paid period
 * (`renewAt`), which waits while a change is in flight, a running app's next health check
 * (`healthAt`), or the retirement of a replaced instance (`retireAt`). Null: none.
 */
export function nextAlarm(current: Pick<InFlightRecord, "kind" | "since"> | null, renewAt: number | null, now: number, healthAt: number | null = null, retireAt: number | null = null): number | null {
  const times: number[] = [];
  if (healthAt !== null) times.push(healthAt);
  if (retireAt !== null) times.push(retireAt);
  if (current?.kind === "deploy") times.push(current.since + DEPLOY_DEADLINE_MS);
  if (current?.kind === "env") times.push(current.since + ENV_APPLY_DEADLINE_MS);
  if (current) times.push(now + RUNNER_CHECK_MS);
  if (renewAt !== null) times.push(current ? Math.max(renewAt, now + RENEWAL_RETRY_MS) : renewAt);
  return times.length === 0 ? null : Math.min(...times);
}
