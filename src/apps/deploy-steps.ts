import { type ContainerRuntime, type Instance, RuntimeUnavailableError } from "../runtime/types";
import { pushRefusal } from "../webhooks/push";
import { instanceColumns, recordLive } from "./app-columns";
import { type DeployResult, NOT_CURRENT, type Refusal, capacityRefusal, refusal } from "./controls";
import type { SwitchOutcome } from "./launch";
import type { DeployJobMessage } from "./messages";
import { recordDeploy } from "./paid-changes";
import { type PlanId, planLimits } from "./plans";
import { replacedRow } from "./relaunch";
import type { AppRow, DeployRow } from "./store";

/** A deploy's two steps in its AppController, with the deploy mark held: its start, and its switch. */

const ENGINE_DOWN: Refusal = { outcome: "refused", code: "ENGINE_UNAVAILABLE", message: "The container engine could not be asked whether the app fits. No charge was made." };

/**
 * Deploy pressed (or a push): records the deploy and queues its job. Billing: the first deploy, or
 * one that would run an app whose paid period has ended, is charged before the build starts, or
 * refused; a first deploy that cannot be placed is refused before anything is charged. With no
 * engine configured the deploy fails at once, the service's fault: nothing is charged.
 */
export async function beginDeploy(env: Env, app: AppRow, runtime: ContainerRuntime | null, input: { deployId: string; now: number; kind?: "deploy" | "push" }): Promise<DeployResult> {
  if (input.kind === "push") {
    const refused = pushRefusal(app);
    if (refused) return refused;
  }
  const full = await capacityRefusal(runtime, app, planLimits(app.plan as PlanId).memoryBytes).catch((err: unknown) => {
    if (err instanceof RuntimeUnavailableError) return { ...ENGINE_DOWN, message: `${ENGINE_DOWN.message} ${err.message}` };
    throw err;
  });
  if (full) return full;
  const billed = await recordDeploy(env, app, input.deployId, input.now, { charge: runtime !== null, kind: input.kind });
  if (!billed.ok) return refusal(billed);
  await env.DEPLOY_JOBS.send({ appId: app.id, deployId: input.deployId } satisfies DeployJobMessage);
  return { outcome: "started", deployId: input.deployId };
}

/**
 * The deploy goes live (src/apps/app-columns.ts recordLive): the app moves to `instance`, with the
 * replaced instance's retire row, as the one compare-and-set on `replaces`; `instance: null` is a
 * stopped app's deploy, built only, which the app takes as the image its next Start runs.
 */
export async function goLive(env: Env, deploy: DeployRow, app: AppRow, input: { instance: Instance | null; replaces: string | null; envVersion: number; now: number }): Promise<SwitchOutcome> {
  const set = input.instance ? { status: "running" as const, ...instanceColumns(input.instance), envAppliedVersion: input.envVersion } : {};
  const builtOnly = input.instance === null && app.status === "stopped";
  if (input.instance === null && !builtOnly) return { switched: false, reason: NOT_CURRENT };
  const retire = input.instance ? replacedRow(env, app, input.instance.id) : null;
  return (await recordLive(env, deploy, app, set, input.replaces, input.now, retire))
    ? { switched: true, replaced: { instanceId: builtOnly ? null : app.instanceId, image: null, serving: app.status === "running" } }
    : { switched: false, reason: NOT_CURRENT };
}
