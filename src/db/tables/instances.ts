import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** What the control plane keeps of the engine's instances: their ports, the ones being retired, and the reconciler's runs. */

/**
 * Host ports of app instances (owner: src/runtime/ports.ts). A row holds its port on its engine
 * from before the instance starts until after it is removed, crashed or restarting in between;
 * no two rows hold the same port of one engine.
 */
export const instancePorts = sqliteTable(
  "instance_ports",
  {
    /** The engine's address (host and port of RUNTIME_URL, no credentials). */
    engine: text("engine").notNull(),
    port: integer("port").notNull(),
    appId: text("app_id").notNull(),
    /** The instance's name, known before it starts; its id once started. */
    instanceName: text("instance_name").notNull(),
    instanceId: text("instance_id"),
    allocatedAt: integer("allocated_at").notNull(),
  },
  (t) => [uniqueIndex("instance_ports_engine_port_idx").on(t.engine, t.port), index("instance_ports_instance_idx").on(t.engine, t.instanceId)],
);

/**
 * The retire ledger (owner: src/apps/retire-ledger.ts): an instance a switch replaced, written in
 * the switch's own D1 batch and drained by the app controller's alarm (wait for its in-flight
 * requests up to `drain_until`, stop with the grace period, remove, free the port, remove the image
 * when no kept deploy needs it, delete the row). Every step is idempotent, so a drain cut short by
 * a restart of the object simply runs again.
 */
export const retireLedger = sqliteTable(
  "retire_ledger",
  {
    instanceId: text("instance_id").primaryKey(),
    appId: text("app_id").notNull(),
    /** Engine key (src/runtime/ports.ts engineKey), node address and host port of the instance. */
    engine: text("engine"),
    node: text("node"),
    port: integer("port"),
    /** The image it ran, removed with it when no kept deploy needs it. */
    image: text("image"),
    /** It was answering requests when replaced (a stopped one has nothing to drain). */
    serving: integer("serving", { mode: "boolean" }).notNull(),
    /** Upper bound of the drain (switch time + DRAIN_SECONDS). */
    drainUntil: integer("drain_until").notNull(),
    createdAt: integer("created_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
  },
  (t) => [index("retire_ledger_app_idx").on(t.appId, t.drainUntil)],
);

/**
 * The reconciler's runs (owner: src/apps/reconcile-runs.ts): over the whole engine (`scope` =
 * `engine`) or one app (its id), what each removed or restored, and each action with its app id.
 */
export const reconcileRuns = sqliteTable(
  "reconcile_runs",
  {
    id: text("id").primaryKey(),
    scope: text("scope").notNull(),
    startedAt: integer("started_at").notNull(),
    finishedAt: integer("finished_at").notNull(),
    counts: text("counts", { mode: "json" }).notNull().$type<Record<string, number>>(),
    actions: text("actions", { mode: "json" }).notNull().$type<ReconcileRunAction[]>(),
    /** Why the run could not look at the engine (it was unreachable), when it could not. */
    error: text("error"),
  },
  (t) => [index("reconcile_runs_started_idx").on(t.startedAt)],
);

/** One action of a run, as the runtime report shows it. */
export interface ReconcileRunAction {
  app_id: string;
  action: string;
  /** The instance id, image reference or port. */
  object: string;
  outcome: "done" | "failed";
}
