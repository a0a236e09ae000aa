/**
 * The reconciler's rules, with no I/O: what the engine holds (instances, networks, images, port
 * rows) against what the records say should exist, and the actions that bring the two together.
 * src/apps/reconcile.ts reads both sides and carries the actions out, each under its app's
 * change mark (AppController.reconcile), so no in-flight change is ever inside what it removes.
 */
import type { AppStatus } from "../db/schema";

/** An object on the engine, with the app its label or name says it belongs to. */
export interface EngineObject {
  /** The instance id, the network's name, or the image reference (`repository:tag`). */
  id: string;
  appId: string;
  /** When the engine created it, ms since the epoch. */
  createdAt: number;
}

export interface EngineInstance extends EngineObject {
  /** The name the control plane gave it (a port row names it before its id is known). */
  name: string;
}

export interface PortRecord {
  port: number;
  appId: string;
  instanceId: string | null;
  instanceName: string;
  allocatedAt: number;
}

/** What the engine holds. `ports`: null where the engine has no port table (a swarm picks its own). */
export interface EngineView {
  instances: EngineInstance[];
  networks: EngineObject[];
  images: EngineObject[];
  ports: PortRecord[] | null;
}

/** An app as the records say it should be on the engine. */
export interface AppRecord {
  id: string;
  status: AppStatus;
  instanceId: string | null;
  image: string | null;
  /** Images its deploys still need: the live one, those kept for rollback, one being built or started. */
  keptImages: string[];
}

/** A retire-ledger row: an instance a switch replaced, still to be drained and removed by its own step. */
export interface RetiringRecord {
  appId: string;
  instanceId: string;
  image: string | null;
}

export interface Records {
  apps: AppRecord[];
  retiring: RetiringRecord[];
}

export type ReconcileAction =
  | { kind: "remove_instance"; appId: string; id: string }
  | { kind: "free_port"; appId: string; port: number }
  | { kind: "remove_image"; appId: string; image: string }
  /** The app should be running and its instance is gone: a new one of its live image. */
  | { kind: "restore"; appId: string; instanceId: string | null };

export interface ReconcilePlan {
  /** In the order to carry them out: instances, then their ports, then images; restores last. */
  actions: ReconcileAction[];
  /** Labelled objects of apps this control plane has no record of (another one may share the engine): left alone. */
  foreign: number;
}

/** Engine ids match when equal, or when one is the other's prefix of at least 12 characters (Docker's short ids). */
export function sameId(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  return short.length >= 12 && long.startsWith(short);
}

/**
 * The actions at `now`. An object no record explains is removed only once it is older than
 * `graceMs` (a change may be making it right now); the caller also checks, under the app's mark,
 * that no change to the app is in flight. An app of ours whose record says `running` and whose
 * instance the engine no longer has is restored. Objects of apps we have no record of are ours
 * only when a port row of ours names them; the others are counted as foreign and left alone.
 */
export function planReconcile(engine: EngineView, records: Records, now: number, graceMs: number): ReconcilePlan {
  const apps = new Map(records.apps.map((a) => [a.id, a]));
  const old = (at: number) => at <= now - graceMs;
  const retiring = (id: string) => records.retiring.some((r) => sameId(r.instanceId, id));
  const portOf = (i: EngineInstance) => engine.ports?.filter((p) => (p.instanceId !== null && sameId(p.instanceId, i.id)) || p.instanceName === i.name) ?? [];
  const actions: ReconcileAction[] = [];
  let foreign = 0;

  const removed: EngineInstance[] = [];
  for (const instance of engine.instances) {
    const app = apps.get(instance.appId);
    const ours = app !== undefined || portOf(instance).length > 0;
    if (!ours) foreign++;
    else if (!(app?.instanceId && sameId(app.instanceId, instance.id)) && !retiring(instance.id) && old(instance.createdAt)) removed.push(instance);
  }
  for (const instance of removed) actions.push({ kind: "remove_instance", appId: instance.appId, id: instance.id });

  for (const row of engine.ports ?? []) {
    const holder = engine.instances.find((i) => (row.instanceId !== null && sameId(row.instanceId, i.id)) || row.instanceName === i.name);
    const freed = holder === undefined ? old(row.allocatedAt) : removed.includes(holder);
    if (freed) actions.push({ kind: "free_port", appId: row.appId, port: row.port });
  }

  for (const image of engine.images) {
    const app = apps.get(image.appId);
    if (!app) foreign++;
    else if (image.id !== app.image && !app.keptImages.includes(image.id) && !records.retiring.some((r) => r.image === image.id) && old(image.createdAt)) {
      actions.push({ kind: "remove_image", appId: app.id, image: image.id });
    }
  }

  // An app's network stays while its record does (Delete removes it); another's is foreign.
  for (const network of engine.networks) if (!apps.has(network.appId)) foreign++;

  for (const app of records.apps) {
    if (app.status !== "running" || !app.image) continue;
    const serving = app.instanceId !== null && engine.instances.some((i) => sameId(i.id, app.instanceId!));
    if (!serving) actions.push({ kind: "restore", appId: app.id, instanceId: app.instanceId });
  }
  return { actions, foreign };
}

/** The apps that have something to do (each is then reconciled under its own mark). */
export function appsWithActions(plan: ReconcilePlan): string[] {
  return [...new Set(plan.actions.map((a) => a.appId))];
}

/** What a run did with one action, as its record keeps it. */
export interface DoneAction {
  /** A plan's action kind. */
  action: string;
  outcome: "done" | "failed";
}

/** Counts of what a run did, for the operator's runtime report. */
export interface ReconcileCounts {
  removed_instances: number;
  freed_ports: number;
  removed_images: number;
  restored: number;
  failed: number;
}

export function countActions(actions: readonly DoneAction[]): ReconcileCounts {
  const n = (kind: ReconcileAction["kind"]) => actions.filter((a) => a.action === kind && a.outcome === "done").length;
  return {
    removed_instances: n("remove_instance"),
    freed_ports: n("free_port"),
    removed_images: n("remove_image"),
    restored: n("restore"),
    failed: actions.filter((a) => a.outcome === "failed").length,
  };
}
