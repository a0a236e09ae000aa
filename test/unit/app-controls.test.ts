import { describe, expect, it } from "vitest";
import {
  CHANGE_IN_FLIGHT_MESSAGE,
  type Control,
  type ControlDecision,
  DELETE_FAILED_MESSAGE,
  type InFlight,
  decideControl,
  deployLabel,
} from "../../src/apps/controls";
import type { AppStatus } from "../../src/db/schema";

// SPEC.md, App controls: the condition of each control, "Stop, Restart and Change plan are refused
// with a try-again message while another change to the app is in flight", "Delete during a running
// deploy fails with a generic failure message", and Deploy pressed while a deploy runs does nothing visible.

const go: ControlDecision = { outcome: "go" };
const busy: ControlDecision = { outcome: "refused", code: "CHANGE_IN_FLIGHT", message: CHANGE_IN_FLIGHT_MESSAGE };
const invalid = (message: string): ControlDecision => ({ outcome: "refused", code: "INVALID_STATE", message });
const deploying: InFlight = { kind: "deploy", deployId: "d1" };
const stopping: InFlight = { kind: "stop" };

describe("decideControl", () => {
  it.each<[string, Control, AppStatus, InFlight, ControlDecision]>([
    ["Deploy: first deploy of a new app", "deploy", "not_deployed", null, go],
    ["Deploy: redeploy of a running app", "deploy", "running", null, go],
    ["Deploy: after a failed first deploy", "deploy", "failed", null, go],
    ["Deploy: pressed again while a deploy runs", "deploy", "running", deploying, { outcome: "already_deploying", deployId: "d1" }],
    ["Deploy: while a stop is applied", "deploy", "running", stopping, busy],
    ["Stop: app running", "stop", "running", null, go],
    ["Stop: app stopped", "stop", "stopped", null, invalid("Only a running app can be stopped.")],
    ["Stop: never deployed", "stop", "not_deployed", null, invalid("Only a running app can be stopped.")],
    ["Stop: while a deploy runs", "stop", "running", deploying, busy],
    ["Start: app stopped", "start", "stopped", null, go],
    ["Start: app running", "start", "running", null, invalid("Only a stopped app can be started.")],
    ["Start: while a plan change is applied", "start", "stopped", { kind: "plan" }, busy],
    ["Restart: app running", "restart", "running", null, go],
    ["Restart: app stopped", "restart", "stopped", null, invalid("Only a running app can be restarted.")],
    ["Restart: while a deploy runs", "restart", "running", deploying, busy],
    ["Change plan: running app", "plan", "running", null, go],
    ["Change plan: stopped app", "plan", "stopped", null, go],
    ["Change plan: never deployed", "plan", "not_deployed", null, go],
    ["Change plan: while a restart is applied", "plan", "running", { kind: "restart" }, busy],
    ["Delete: no deploy running", "delete", "running", null, go],
    ["Delete: never deployed", "delete", "not_deployed", null, go],
    ["Delete: during a running deploy", "delete", "running", deploying, { outcome: "refused", code: "DELETE_FAILED", message: DELETE_FAILED_MESSAGE }],
    ["Delete: while a stop is applied", "delete", "running", stopping, busy],
  ])("%s", (_name, control, status, inFlight, expected) => {
    expect(decideControl(control, status, inFlight)).toEqual(expected);
  });

  it("the generic delete failure says nothing about why", () => {
    expect(DELETE_FAILED_MESSAGE).not.toMatch(/deploy/i);
  });
});

describe("deployLabel", () => {
  it.each<[AppStatus, boolean, string]>([
    ["not_deployed", false, "Deploy"],
    ["not_deployed", true, "Deploying…"],
    ["failed", false, "Redeploy"],
    ["running", false, "Redeploy"],
    ["stopped", false, "Redeploy"],
    ["running", true, "Deploying…"],
  ])("%s, deploying %s: %s", (status, deploying, label) => {
    expect(deployLabel(status, deploying)).toBe(label);
  });
});
