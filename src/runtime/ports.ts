/**
 * Host ports of app instances, owned by the control plane (the only module naming the
 * `instance_ports` table). A port is allocated in D1 before its instance starts and held for as
 * long as the instance exists, running, restarting or crashed; it is freed only after the
 * instance is removed. The unique (engine, port) index means no two instances, of one app or of
 * two, are ever given the same port of one engine, so a crashed app's traffic can never reach a
 * container that took its port. `withPortTable` wraps a runtime so every start and remove does
 * this, whoever calls it.
 */
import { and, eq, gte, lte, or, desc } from "drizzle-orm";
import type { Database } from "../db/client";
import { instancePorts } from "../db/schema";
import { pickPort } from "./port-range";
import { type ContainerRuntime, type Instance, InstanceExitedError, type InstanceSpec, type PortRange, PortTakenError, RuntimeUnavailableError } from "./types";

export type { PortRange } from "./types";
export { pickPort } from "./port-range";

/** Tries of `startWithPort` before giving up: ports refused by the engine, or lost to a concurrent allocation. */
export const PORT_TRIES = 30;

/** The engine's key in the table: host and port of its URL, never its credentials. */
export function engineKey(runtimeUrl: string): string {
  const url = new URL(runtimeUrl);
  return url.host;
}

/** The range has no free port on this engine. */
export class NoFreePortError extends RuntimeUnavailableError {}

/**
 * Allocates a port for an instance about to start (its `name`), or null when a concurrent
 * allocation took the chosen port first (try again).
 */
export async function allocatePort(
  db: Database,
  input: { engine: string; range: PortRange; appId: string; instanceName: string; now: number; exclude?: ReadonlySet<number>; after?: number },
): Promise<number | null> {
  const inRange = and(eq(instancePorts.engine, input.engine), gte(instancePorts.port, input.range.first), lte(instancePorts.port, input.range.last));
  const [rows, last] = await Promise.all([
    db.select({ port: instancePorts.port }).from(instancePorts).where(inRange),
    db.select({ port: instancePorts.port }).from(instancePorts).where(inRange).orderBy(desc(instancePorts.allocatedAt), desc(instancePorts.port)).limit(1),
  ]);
  const port = pickPort(input.range, new Set(rows.map((r) => r.port)), input.after ?? last[0]?.port ?? null, input.exclude);
  if (port === null) throw new NoFreePortError(`Every host port in ${input.range.first}-${input.range.last} is held by an instance.`);
  const inserted = await db
    .insert(instancePorts)
    .values({ engine: input.engine, port, appId: input.appId, instanceName: input.instanceName, instanceId: null, allocatedAt: input.now })
    .onConflictDoNothing()
    .returning({ port: instancePorts.port });
  return inserted.length > 0 ? port : null;
}

/** Records which instance holds the port, once the engine named it. */
export async function holdPort(db: Database, engine: string, port: number, instanceId: string): Promise<void> {
  await db.update(instancePorts).set({ instanceId }).where(and(eq(instancePorts.engine, engine), eq(instancePorts.port, port)));
}

/** Frees one port (its instance never started, or is removed). */
export async function freePort(db: Database, engine: string, port: number): Promise<void> {
  await db.delete(instancePorts).where(and(eq(instancePorts.engine, engine), eq(instancePorts.port, port)));
}

/** Frees the ports held by an instance, named by id or name; call only after it is removed. */
export async function freeInstancePorts(db: Database, engine: string, instance: string): Promise<void> {
  await db.delete(instancePorts).where(and(eq(instancePorts.engine, engine), or(eq(instancePorts.instanceId, instance), eq(instancePorts.instanceName, instance))));
}

/** The ports held on an engine, for tests and the operator: port, app and instance. */
export async function heldPorts(db: Database, engine: string): Promise<{ port: number; appId: string; instanceId: string | null; instanceName: string }[]> {
  return db
    .select({ port: instancePorts.port, appId: instancePorts.appId, instanceId: instancePorts.instanceId, instanceName: instancePorts.instanceName })
    .from(instancePorts)
    .where(eq(instancePorts.engine, engine))
    .orderBy(instancePorts.port);
}

/** A port row as the reconciler reads it (src/apps/reconcile.ts). */
export type PortRow = typeof instancePorts.$inferSelect;

/** Every port held on an engine, or only an app's: the reconciler's view of the table. */
export async function portRows(db: Database, engine: string, appId?: string): Promise<PortRow[]> {
  const where = appId === undefined ? eq(instancePorts.engine, engine) : and(eq(instancePorts.engine, engine), eq(instancePorts.appId, appId));
  return db.select().from(instancePorts).where(where).orderBy(instancePorts.port);
}

/**
 * Allocates a port, then starts the instance on it. A port the engine refuses (something outside
 * the control plane holds it) is freed and the next one tried; so is one a concurrent allocation
 * took first. After a refusal the search goes on from a random point of the range: ports held
 * outside the control plane tend to come in runs. The port stays held by an instance that exited
 * at once (it still exists).
 */
export async function startWithPort(
  runtime: ContainerRuntime,
  db: Database,
  spec: InstanceSpec,
  options: { engine: string; range: PortRange; now?: () => number },
): Promise<Instance> {
  const appId = spec.labels["control-plane.app_id"] ?? spec.labels.app_id ?? "";
  const refused = new Set<number>();
  const { first, last } = options.range;
  for (let attempt = 0; attempt < PORT_TRIES; attempt++) {
    const after = refused.size > 0 ? first + Math.floor(Math.random() * (last - first + 1)) : undefined;
    const port = await allocatePort(db, { engine: options.engine, range: options.range, appId, instanceName: spec.name, now: options.now?.() ?? Date.now(), exclude: refused, after });
    if (port === null) continue;
    try {
      const instance = await runtime.start({ ...spec, hostPort: port });
      await holdPort(db, options.engine, port, instance.id);
      return instance;
    } catch (error) {
      if (error instanceof InstanceExitedError) {
        await holdPort(db, options.engine, port, error.instanceId);
        throw error;
      }
      // The instance is gone (the adapter removes one that did not start): so is its hold.
      await freePort(db, options.engine, port);
      if (!(error instanceof PortTakenError)) throw error;
      refused.add(port);
    }
  }
  throw new RuntimeUnavailableError(`No free host port could be published after ${PORT_TRIES} tries.`);
}

/**
 * One engine's runtime with its instances' host ports allocated in D1: `start` and `replace` (a
 * new container there) allocate, retrying on a refused port; `remove` and `revert` free the
 * removed instance's port once the engine removed it. Every other call passes through; `restart`
 * and `stop` keep the port.
 */
export function withPortTable(runtime: ContainerRuntime, db: Database, options: { engine: string; range: PortRange }): ContainerRuntime {
  const wrapped: Partial<ContainerRuntime> = {
    start: (spec) => startWithPort(runtime, db, spec, options),
    replace: (_previous, spec) => startWithPort(runtime, db, spec, options),
    remove: async (id, removal) => {
      await runtime.remove(id, removal);
      await freeInstancePorts(db, options.engine, id);
    },
    revert: async (id, previous) => {
      await runtime.revert(id, previous);
      if (id !== previous) await freeInstancePorts(db, options.engine, id);
    },
  };
  return new Proxy(runtime, {
    get(target, key, receiver) {
      if (typeof key === "string" && key in wrapped) return wrapped[key as keyof ContainerRuntime];
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
