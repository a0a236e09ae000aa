/**
 * Where a swarm instance went. Swarm moves an instance by itself (a drained or failed node's task
 * is rescheduled elsewhere; a service update's new task takes a new port), so when a request to
 * the recorded place fails the proxy asks the apps module that owns the app's columns
 * (src/apps/instance-move.ts: the engine's `inspect`, then the new place recorded on the app as a
 * compare-and-set on the instance and its old URL). Per isolate, at most one question per app per FOLLOW_INTERVAL_MS;
 * failures meanwhile share its answer, so a flood of requests to a dead app costs one call a second.
 */
import { followMovedInstance } from "../apps/instance-move";
import { mayMove } from "./instance-target";
import type { Route } from "./route-cache";

export const FOLLOW_INTERVAL_MS = 1000;
const KEPT = 1000;

const asked = new Map<string, { at: number; answer: Promise<Route | null> }>();

/** The route's instance where it answers now, or null when it has not moved (or cannot be asked). */
export function followInstance(env: Env, route: Route, now: number): Promise<Route | null> {
  if (!mayMove(route) || !route.instanceId) return Promise.resolve(null);
  const last = asked.get(route.appId);
  if (last && now - last.at < FOLLOW_INTERVAL_MS && last.at <= now) return last.answer;
  const answer = ask(env, route, route.instanceId).catch(() => null);
  asked.delete(route.appId);
  asked.set(route.appId, { at: now, answer });
  while (asked.size > KEPT) asked.delete(asked.keys().next().value!);
  return answer;
}

async function ask(env: Env, route: Route, instanceId: string): Promise<Route | null> {
  const moved = await followMovedInstance(env, route.appId, instanceId, route.instanceUrl);
  if (!moved) return null;
  const address = moved.address;
  return { ...route, instanceUrl: moved.url, engine: address?.engine ?? route.engine, node: address?.node ?? null, port: address?.port ?? null };
}
