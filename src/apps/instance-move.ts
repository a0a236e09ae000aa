import { runtimeFor } from "../runtime";
import type { Instance } from "../runtime/types";
import { moveInstance } from "./app-columns";

/**
 * The proxy's question when a request to an app's recorded instance failed (src/routing/
 * instance-follow.ts): the engine is asked where the instance runs now (Swarm moves one by
 * itself), and a new place is recorded on the app as a compare-and-set on the instance and its
 * old URL, so a switch meanwhile is never undone. Null when it has not moved (or cannot be asked).
 */
export async function followMovedInstance(env: Env, appId: string, instanceId: string, fromUrl: string): Promise<Instance | null> {
  const runtime = runtimeFor(env);
  const state = runtime ? await runtime.inspect(instanceId) : null;
  if (!state?.running || !state.url || state.url === fromUrl) return null;
  const instance: Instance = { id: state.id, url: state.url, ...(state.address ? { address: state.address } : {}) };
  await moveInstance(env, appId, instance, fromUrl);
  return instance;
}
