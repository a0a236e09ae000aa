import type { AppStatus } from "../db/schema";

/**
 * SPEC.md, App controls: which control applies to which app state, and what a control pressed
 * while another change is in flight gets. Pure: the AppController asks it before doing anything.
 */
export const CONTROLS = ["deploy", "stop", "start", "restart", "plan", "delete"] as const;
export type Control = (typeof CONTROLS)[number];

/** What the controller knows is being applied to the app right now (`env`: a saved variable set). */
export type InFlight = { kind: Control | "env"; deployId?: string } | null;

export type ControlDecision =
  | { outcome: "go" }
  /** Deploy pressed while a deploy runs: nothing new starts, the running deploy is the answer. */
  | { outcome: "already_deploying"; deployId: string }
  | { outcome: "refused"; code: "CHANGE_IN_FLIGHT" | "INVALID_STATE" | "DELETE_FAILED"; message: string };

export const CHANGE_IN_FLIGHT_MESSAGE = "Another change to this app is being applied. Try again in a moment.";
/** SPEC.md: "Delete during a running deploy fails with a generic failure message." */
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

/** The label of the deploy button (SPEC.md: `Deploy` / `Redeploy`, `Deploying…` while one runs). */
export function deployLabel(status: AppStatus, deploying: boolean): "Deploy" | "Redeploy" | "Deploying…" {
  if (deploying) return "Deploying…";
  return status === "not_deployed" ? "Deploy" : "Redeploy";
}
