import { launchEnv } from "../envvars/store";
import { maskText, secretsToMask } from "../logs/mask";
import { runtimeFor } from "../runtime";
import type { AppRow } from "./store";
import { CRASH_OUTPUT_LINES, type InstanceView, viewInstance } from "./views";

/**
 * What the engine says of a running app's serving instance (running, restarting, crashed, with a
 * crashed one's last output), for the app JSON and the app page; null when none serves or the
 * engine cannot be asked.
 */
export async function servingInstance(env: Env, row: AppRow, now: number): Promise<InstanceView | null> {
  const runtime = row.status === "running" && row.instanceId ? runtimeFor(env) : null;
  if (!runtime || !row.instanceId) return null;
  try {
    const state = await runtime.state(row.instanceId);
    if (!state) return null;
    const view = viewInstance(state, now);
    if (view.state !== "crashed") return view;
    const output = await runtime.logs(row.instanceId, { tail: CRASH_OUTPUT_LINES });
    return viewInstance(state, now, maskText(output, secretsToMask(Object.values((await launchEnv(env, row.id)).env))));
  } catch {
    return null;
  }
}
