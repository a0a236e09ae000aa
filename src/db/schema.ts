import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { HealthCheckSettings, HealthRecord } from "./health-columns";

/** Times are Unix milliseconds (integers) throughout. */

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  /** `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>` */
  passwordHash: text("password_hash").notNull(),
  createdAt: integer("created_at").notNull(),
});

export const sessions = sqliteTable(
  "sessions",
  {
    /** SHA-256 (hex) of the cookie value; the cookie itself is never stored. */
    idHash: text("id_hash").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    csrfToken: text("csrf_token").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    /** The session's public id (random hex), the one the sessions list shows and ends. */
    id: text("id").notNull(),
    lastSeenAt: integer("last_seen_at"),
    /** The client address and user agent at sign-in, as the sessions list shows them. */
    address: text("address"),
    userAgent: text("user_agent"),
  },
  (t) => [index("sessions_account_idx").on(t.accountId), uniqueIndex("sessions_id_idx").on(t.id)],
);

/**
 * Two-step sign-in (TOTP, RFC 6238) of an account: the secret, sealed like an env value
 * (src/auth/totp-store.ts); `enabledAt` null while set up but not yet confirmed with a code;
 * `lastStep` the newest time step accepted (no code is accepted twice). Owner: src/auth/.
 */
export const accountTotp = sqliteTable("account_totp", {
  accountId: text("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  secret: text("secret", { mode: "json" }).notNull().$type<SealedSecret>(),
  createdAt: integer("created_at").notNull(),
  enabledAt: integer("enabled_at"),
  lastStep: integer("last_step"),
});

/** One-time recovery codes of an account's two-step sign-in, as SHA-256 hex. Owner: src/auth/. */
export const recoveryCodes = sqliteTable(
  "recovery_codes",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.codeHash] })],
);

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** The first characters of the secret, safe to show (`dbx_AbCd`). */
    prefix: text("prefix").notNull(),
    /** SHA-256 (hex) of the whole secret: the only form in which it is kept. */
    tokenHash: text("token_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [uniqueIndex("api_tokens_hash_idx").on(t.tokenHash), index("api_tokens_account_idx").on(t.accountId)],
);

export const databases = sqliteTable(
  "databases",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("databases_account_idx").on(t.accountId)],
);

export const EXPORT_STATUSES = ["pending", "running", "ready", "failed", "expired"] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const exports = sqliteTable(
  "exports",
  {
    id: text("id").primaryKey(),
    databaseId: text("database_id")
      .notNull()
      .references(() => databases.id, { onDelete: "cascade" }),
    status: text("status", { enum: EXPORT_STATUSES }).notNull(),
    createdAt: integer("created_at").notNull(),
    startedAt: integer("started_at"),
    /** When the export became ready or failed. Retention counts from here. */
    finishedAt: integer("finished_at"),
    sizeBytes: integer("size_bytes"),
    sha256: text("sha256"),
    attempts: integer("attempts").notNull().default(0),
    /**
     * Past this moment (Unix ms) a pending or running export is failed: no try of its job can
     * still be under way (see exportDeadline). 0 on rows older than the column: failed at once.
     */
    deadlineAt: integer("deadline_at").notNull().default(0),
    /** Internal failure detail for operators; never sent to clients. */
    failureReason: text("failure_reason"),
    /**
     * Checkpoints of a running export's job so far: each queue invocation goes on from the last
     * one and stores the next only over the one it started from (two tries cannot both store theirs).
     */
    step: integer("step").notNull().default(0),
    /** The last checkpoint (JSON, see src/exports/progress.ts); null before the first and once finished. */
    progress: text("progress"),
    /**
     * The runner's last sign of life (Unix ms): accepted, claimed, a heartbeat, a checkpoint, or when
     * a retry is due. Silent for a minute, the export's job is queued again once, then failed
     * (src/exports/runner-watch.ts). Null on rows older than the column: its creation counts.
     */
    runnerAliveAt: integer("runner_alive_at"),
    /** Times the job was queued again since the last checkpoint because its runner fell silent. */
    revivals: integer("revivals").notNull().default(0),
  },
  (t) => [
    index("exports_database_idx").on(t.databaseId, t.createdAt),
    index("exports_status_idx").on(t.status, t.finishedAt),
    index("exports_deadline_idx").on(t.status, t.deadlineAt),
  ],
);

/**
 * R2 work that is owed and must not be forgotten: an object to delete (`uploadId` null) or a
 * multipart upload to abort. Written before the work is tried, removed once it is done; the
 * sweep retries what is left. A row naming an export waits while that export is in flight.
 */
export const r2Cleanup = sqliteTable(
  "r2_cleanup",
  {
    id: text("id").primaryKey(),
    key: text("key").notNull(),
    uploadId: text("upload_id"),
    /** The export whose job owns this upload; no foreign key, so the row outlives the export. */
    exportId: text("export_id"),
    createdAt: integer("created_at").notNull(),
    attempts: integer("attempts").notNull().default(0),
  },
  (t) => [index("r2_cleanup_created_idx").on(t.createdAt), index("r2_cleanup_export_idx").on(t.exportId)],
);

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

/** A secret sealed with AES-GCM under ENV_ENCRYPTION_KEY, bound to its app and purpose (src/lib/sealing.ts). */
export interface SealedSecret {
  kid: string;
  iv: string;
  ciphertext: string;
}

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

/** docs/domains.md, rules 1-5 (src/domains/states.ts); shown as `Pending DNS`, `Verifying…`, `Active`, `Error`. */
export const CUSTOM_DOMAIN_STATUSES = ["pending_dns", "verifying", "active", "error"] as const;

/**
 * Custom domains claimed by apps (owner: src/domains/store.ts). Several apps may claim one
 * hostname while it waits (`Pending DNS`, `Error`); one app at most holds it `Verifying…` or
 * `Active` (the partial unique index), the first whose claim DNS verified. Each claim has its own
 * DomainChecker object (named by the row id) whose alarm runs the re-checks.
 */
export const customDomains = sqliteTable(
  "custom_domains",
  {
    id: text("id").primaryKey(),
    /** Lowercase, punycode, no trailing dot. */
    hostname: text("hostname").notNull(),
    appId: text("app_id")
      .notNull()
      .references(() => apps.id, { onDelete: "cascade" }),
    status: text("status", { enum: CUSTOM_DOMAIN_STATUSES }).notNull(),
    /** Why the domain is in `Error` (what was found and what was expected). */
    reason: text("reason"),
    /** The route is in place: the proxy serves the hostname from `Verifying…` on. */
    routeReady: integer("route_ready", { mode: "boolean" }).notNull().default(false),
    /** The hostname provider serves HTTPS for it (a certificate was obtained). */
    https: integer("https", { mode: "boolean" }).notNull().default(false),
    /** The hostname provider's id for it (Cloudflare custom hostname id), once created. */
    providerRef: text("provider_ref"),
    createdAt: integer("created_at").notNull(),
    lastCheckedAt: integer("last_checked_at"),
    nextCheckAt: integer("next_check_at"),
    /** The claim's token: the value of the TXT record at `_cp-challenge.<hostname>` that proves it. */
    token: text("token").notNull().default(""),
    /** Since when the claim has been waiting (`Pending DNS` or `Error`); null while served. Expiry counts from it. */
    waitingSince: integer("waiting_since"),
  },
  (t) => [
    uniqueIndex("custom_domains_app_hostname_idx").on(t.appId, t.hostname),
    uniqueIndex("custom_domains_held_idx")
      .on(t.hostname)
      .where(sql`${t.status} IN ('verifying', 'active')`),
    index("custom_domains_hostname_idx").on(t.hostname),
    index("custom_domains_app_idx").on(t.appId, t.createdAt),
  ],
);

/**
 * Claims removed because DNS never verified them within DOMAIN_CLAIM_DAYS (owner:
 * src/domains/store.ts): the app page shows a one-line note of each for 30 days.
 */
export const expiredDomainClaims = sqliteTable(
  "expired_domain_claims",
  {
    id: text("id").primaryKey(),
    appId: text("app_id")
      .notNull()
      .references(() => apps.id, { onDelete: "cascade" }),
    hostname: text("hostname").notNull(),
    expiredAt: integer("expired_at").notNull(),
  },
  (t) => [index("expired_domain_claims_app_idx").on(t.appId, t.expiredAt)],
);

/**
 * Subdomains an account released (its app deleted, or given another subdomain), held for that
 * account alone until `held_until` (SUBDOMAIN_HOLD_DAYS), so a stranger cannot pick up a name
 * whose DNS records still point at it (owner: src/apps/subdomain-holds.ts). No foreign key: a hold
 * outlives the account that made it.
 */
export const subdomainHolds = sqliteTable("subdomain_holds", {
  subdomain: text("subdomain").primaryKey(),
  accountId: text("account_id").notNull(),
  heldUntil: integer("held_until").notNull(),
});

/**
 * The account each custom hostname was last `Active` for (owner: src/domains/last-owners.ts): any
 * other account's claim of it needs the TXT proof, a CNAME to its app is not enough.
 */
export const domainLastOwners = sqliteTable("domain_last_owners", {
  hostname: text("hostname").primaryKey(),
  accountId: text("account_id").notNull(),
  activeAt: integer("active_at").notNull(),
});

/**
 * The wallet: append-only; an account's balance is the sum of its entries (whole DA). A charge is
 * written in the same D1 batch as the change it pays for. Entries outlive the app they name.
 */
export const ledgerEntries = sqliteTable(
  "ledger_entries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    at: integer("at").notNull(),
    /** Signed whole DA: credits positive, charges negative. */
    amount: integer("amount").notNull(),
    kind: text("kind", { enum: ["credit", "charge"] }).notNull(),
    appId: text("app_id"),
    appName: text("app_name"),
    periodStart: integer("period_start"),
    periodEnd: integer("period_end"),
    description: text("description").notNull(),
  },
  (t) => [index("ledger_account_idx").on(t.accountId, t.at), uniqueIndex("ledger_app_period_idx").on(t.appId, t.periodStart)],
);

/**
 * Operator credits sent with an `Idempotency-Key`: the key, what was asked (to refuse the key with
 * another request), the ledger entry it wrote and the reply the first call got, replayed to every
 * later call with the key. Written in the same D1 batch as the entry. Owner:
 * src/billing/credit-requests.ts.
 */
export const creditRequests = sqliteTable("credit_requests", {
  key: text("key").primaryKey(),
  accountId: text("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" }),
  amount: integer("amount").notNull(),
  note: text("note").notNull(),
  entryId: text("entry_id").notNull(),
  createdAt: integer("created_at").notNull(),
  /** The first call's 201 body (JSON), filled in by the batch that wrote the entry. */
  response: text("response"),
});

/** Passkeys (WebAuthn credentials); owner: src/auth/. The id is the credential id (base64url). */
export const passkeys = sqliteTable(
  "passkeys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** The COSE public key, base64url. */
    publicKey: text("public_key").notNull(),
    counter: integer("counter").notNull().default(0),
    /** JSON array of the authenticator's transports, as it reported them. */
    transports: text("transports"),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("passkeys_account_idx").on(t.accountId)],
);

/** One-use WebAuthn challenges (`register` with its account, `signin` without); owner: src/auth/. */
export const passkeyChallenges = sqliteTable("passkey_challenges", {
  challenge: text("challenge").primaryKey(),
  kind: text("kind", { enum: ["register", "signin"] }).notNull(),
  accountId: text("account_id"),
  expiresAt: integer("expires_at").notNull(),
});

/** The append-only audit log (owner: src/auth/audit-store.ts); `fields` is a JSON array of names, never values. */
export const auditLog = sqliteTable(
  "audit_log",
  {
    /** Sortable: the time (13 digits) then random hex, so newest first is id order. */
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    at: integer("at").notNull(),
    actorKind: text("actor_kind").notNull(),
    actorId: text("actor_id"),
    actorName: text("actor_name"),
    address: text("address"),
    userAgent: text("user_agent"),
    action: text("action").notNull(),
    resourceKind: text("resource_kind").notNull(),
    resourceId: text("resource_id"),
    resourceName: text("resource_name"),
    fields: text("fields").notNull(),
    outcome: text("outcome", { enum: ["done", "refused"] }).notNull(),
    code: text("code"),
    requestId: text("request_id"),
  },
  (t) => [index("audit_log_account_idx").on(t.accountId, t.at), index("audit_log_at_idx").on(t.at)],
);

/** Where an account's alerts go (owner: src/notifications/); `secret` only for `webhook` channels. */
export const notificationChannels = sqliteTable(
  "notification_channels",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["webhook", "slack", "discord"] }).notNull(),
    url: text("url").notNull(),
    /** JSON array of event names. */
    events: text("events", { mode: "json" }).notNull().$type<string[]>(),
    secret: text("secret", { mode: "json" }).$type<SealedSecret>(),
    consoleOrigin: text("console_origin").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("notification_channels_account_idx").on(t.accountId)],
);

/** The alerts' outbox, one row per event and channel (owner: src/notifications/). */
export const notificationDeliveries = sqliteTable(
  "notification_deliveries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    channelId: text("channel_id").notNull(),
    event: text("event").notNull(),
    eventKey: text("event_key").notNull(),
    appId: text("app_id"),
    /** The event's JSON payload (the webhook body). */
    payload: text("payload").notNull(),
    status: text("status", { enum: ["pending", "delivered", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    statusCode: integer("status_code"),
    error: text("error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    nextAttemptAt: integer("next_attempt_at").notNull(),
  },
  (t) => [
    uniqueIndex("notification_deliveries_key_idx").on(t.channelId, t.eventKey),
    index("notification_deliveries_account_idx").on(t.accountId, t.createdAt),
    index("notification_deliveries_pending_idx").on(t.status, t.nextAttemptAt),
  ],
);

/** Open alert incidents per subject (app id, or `account:<id>`) and kind (owner: src/notifications/). */
export const notificationIncidents = sqliteTable(
  "notification_incidents",
  {
    subject: text("subject").notNull(),
    kind: text("kind").notNull(),
    openedAt: integer("opened_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.subject, t.kind] })],
);

export const schema = { accounts, sessions, accountTotp, recoveryCodes, apiTokens, databases, exports, r2Cleanup, apps, deploys, ledgerEntries, appEnvVars, customDomains, subdomainHolds, domainLastOwners, creditRequests, retireLedger, reconcileRuns, passkeys, passkeyChallenges, auditLog, notificationChannels, notificationDeliveries, notificationIncidents };
