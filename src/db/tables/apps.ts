import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { HealthCheckSettings, HealthRecord } from "../health-columns";
import type { SealedSecret } from "../sealed-column";
import { accounts } from "./accounts";

/** Apps, their environment variables and their deploys. */

/** Where the probed port came from (docs/apps.md, contract 2). */
export const PORT_SOURCES = ["expose", "default", "variable"] as const;
export type PortSource = (typeof PORT_SOURCES)[number];

export const APP_STATUSES = ["not_deployed", "running", "stopped", "failed"] as const;
export type AppStatus = (typeof APP_STATUSES)[number];

export const apps = sqliteTable(
  "apps",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** https URL of the git repository (http only for loopback hosts). */
    repository: text("repository").notNull(),
    branch: text("branch").notNull(),
    /** Build context, relative to the repository root; '' is the root. */
    rootDirectory: text("root_directory").notNull(),
    /** Relative to the root directory. */
    dockerfilePath: text("dockerfile_path").notNull(),
    /** Unique across the service; the app answers at `<subdomain>.<APPS_DOMAIN>`. */
    subdomain: text("subdomain").notNull(),
    plan: text("plan").notNull(),
    status: text("status", { enum: APP_STATUSES }).notNull(),
    createdAt: integer("created_at").notNull(),
    /** When Deploy was first pressed: from then on the subdomain is fixed. */
    firstDeployAt: integer("first_deploy_at"),
    /** The instance that serves the app's hostname, when there is one. */
    instanceId: text("instance_id"),
    instanceUrl: text("instance_url"),
    /** Where that instance answers: its engine (`swarm:engine.example.net`), node address and host port. */
    instanceEngine: text("instance_engine"),
    instanceNode: text("instance_node"),
    instancePort: integer("instance_port"),
    /** Image of the live instance, and the deploy that built it. */
    image: text("image"),
    liveDeployId: text("live_deploy_id"),
    port: integer("port"),
    portSource: text("port_source", { enum: PORT_SOURCES }),
    portReason: text("port_reason"),
    /** The version of the app's environment variable set: one more on every save that changes it. */
    envVersion: integer("env_version").notNull().default(0),
    /** The version the serving instance was started with. */
    envAppliedVersion: integer("env_applied_version").notNull().default(0),
    /** The last save whose new instance failed its check; cleared when a later one is applied. */
    envFailure: text("env_failure", { mode: "json" }).$type<EnvApplyFailure>(),
    /** Billing (src/billing): whether the app was ever charged, and its paid period. */
    billingCharged: integer("billing_charged", { mode: "boolean" }).notNull().default(false),
    periodStart: integer("period_start"),
    periodEnd: integer("period_end"),
    stoppedSince: integer("stopped_since"),
    paymentDue: integer("payment_due", { mode: "boolean" }).notNull().default(false),
    paidPrice: integer("paid_price"),
    /** The app's health check settings (src/apps/health.ts); null: the defaults. */
    healthCheck: text("health_check", { mode: "json" }).$type<HealthCheckSettings>(),
    /** What the controller's periodic checks found of the serving instance. */
    health: text("health", { mode: "json" }).$type<HealthRecord>(),
    /** Why the control plane last restarted the instance fresh (src/apps/disk-watch.ts), and when. */
    lastRestart: text("last_restart", { mode: "json" }).$type<{ at: number; reason: string }>(),
    /** The forge access token for a private repository, sealed (src/source/token.ts); never shown again. */
    sourceToken: text("source_token", { mode: "json" }).$type<SealedSecret>(),
    /** The secret that signs deliveries to the app's webhook, sealed (src/webhooks/secret.ts). */
    webhookSecret: text("webhook_secret", { mode: "json" }).$type<SealedSecret>(),
  },
  (t) => [uniqueIndex("apps_subdomain_idx").on(t.subdomain), index("apps_account_idx").on(t.accountId, t.createdAt)],
);

/** Why the instance for a saved variable set did not take over (its check's log, no values). */
export interface EnvApplyFailure {
  version: number;
  message: string;
  log: string;
  at: number;
}

/**
 * An app's environment variables, encrypted (AES-GCM, associated data: app id and key); the clear
 * value is never stored. No history: a save replaces the app's rows.
 */
export const appEnvVars = sqliteTable(
  "app_env_vars",
  {
    appId: text("app_id")
      .notNull()
      .references(() => apps.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    /** Order of the row in the editor. */
    position: integer("position").notNull(),
    /** The ENV_ENCRYPTION_KEY entry that sealed it. */
    kid: text("kid").notNull(),
    /** base64 of the 12-byte IV and of the ciphertext with its tag. */
    iv: text("iv").notNull(),
    ciphertext: text("ciphertext").notNull(),
  },
  (t) => [primaryKey({ columns: [t.appId, t.key] })],
);

export const DEPLOY_STATUSES = ["building", "starting", "live", "failed", "superseded"] as const;
export type DeployStatus = (typeof DEPLOY_STATUSES)[number];
/** How a deploy came about: Deploy pressed, Rollback to an earlier deploy's image, or a push to the branch. */
export const DEPLOY_KINDS = ["deploy", "rollback", "push"] as const;
export type DeployKind = (typeof DEPLOY_KINDS)[number];

export const deploys = sqliteTable(
  "deploys",
  {
    id: text("id").primaryKey(),
    appId: text("app_id")
      .notNull()
      .references(() => apps.id, { onDelete: "cascade" }),
    status: text("status", { enum: DEPLOY_STATUSES }).notNull(),
    startedAt: integer("started_at").notNull(),
    finishedAt: integer("finished_at"),
    /** Tries of the deploy job so far (a crashed job is retried by the queue). */
    attempts: integer("attempts").notNull().default(0),
    image: text("image"),
    /** The instance this deploy started, once started. */
    instanceId: text("instance_id"),
    port: integer("port"),
    portSource: text("port_source", { enum: PORT_SOURCES }),
    portReason: text("port_reason"),
    /**
     * The build mark: set when a try of the deploy job starts this deploy's build, refreshed while
     * the build runs. A later try (a queue retry) that finds it set never starts another build: it
     * reuses the deploy's image or waits for it while the mark stays fresh.
     */
    buildAliveAt: integer("build_alive_at"),
    /** The deploy's runner (queue consumer) last said it is alive: written at least every 15 s while it works. */
    runnerAliveAt: integer("runner_alive_at"),
    /** The red panel: what the log says went wrong (JSON `{kind, message}`). */
    failure: text("failure", { mode: "json" }).$type<{ kind: string; message: string }>(),
    kind: text("kind", { enum: DEPLOY_KINDS }).notNull().default("deploy"),
    /** The commit built (the forge's archive folder or API); null when the forge did not say. */
    commitSha: text("commit_sha"),
    commitMessage: text("commit_message"),
    /** The engine's id of the built image (`sha256:...`). */
    imageDigest: text("image_digest"),
    /** The plan and the variable set version the deploy's instance was started with. */
    plan: text("plan"),
    envVersion: integer("env_version"),
    /** The image was removed (older than the last live deploys kept for rollback): no rollback to it. */
    imageRemoved: integer("image_removed", { mode: "boolean" }).notNull().default(false),
    /** For a rollback: the deploy whose image it runs again. */
    rollbackOf: text("rollback_of"),
  },
  (t) => [index("deploys_app_idx").on(t.appId, t.startedAt)],
);
