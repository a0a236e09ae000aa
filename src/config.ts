import { z } from "zod";
import { PLANS } from "./apps/plans";
import { DOMAIN_SETTINGS, DOMAIN_SETTING_DEFAULTS, domainSettingsProblems } from "./domains/settings";
import { RUNTIME_SETTINGS, RUNTIME_SETTING_DEFAULTS, runtimeSettingsProblems } from "./runtime/settings";
import { decimal, encryptionKeys, flag, seconds, signingKeys } from "./lib/setting-parsers";

/**
 * Every setting of the Worker, read from plain environment variables (wrangler.toml `[vars]`,
 * `.dev.vars` locally) and validated here, in one place. A bad value raises a ConfigError that
 * names the variable, so the Worker refuses to start instead of failing later.
 */

const ConfigSchema = z.object({
  EXPORT_COOLDOWN_SECONDS: seconds("EXPORT_COOLDOWN_SECONDS", 300, 0),
  LINK_TTL_SECONDS: seconds("LINK_TTL_SECONDS", 1800),
  ARCHIVE_RETENTION_SECONDS: seconds("ARCHIVE_RETENTION_SECONDS", 86400),
  RATE_LIMIT_PER_MINUTE: seconds("RATE_LIMIT_PER_MINUTE", 120),
  RATE_LIMIT_BURST: seconds("RATE_LIMIT_BURST", 30),
  PENDING_RETRY_AFTER_SECONDS: seconds("PENDING_RETRY_AFTER_SECONDS", 2),
  IN_FLIGHT_RETRY_AFTER_SECONDS: seconds("IN_FLIGHT_RETRY_AFTER_SECONDS", 5),
  /**
   * Docker Engine API base address; empty: no engine, deploys fail at once saying so. Plain http
   * only for this machine, and credentials for any other (src/runtime/settings.ts).
   */
  RUNTIME_URL: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = raw?.trim() ?? "";
      if (text === "") return "";
      if (!/^https?:\/\/[^/\s]+\/?$/.test(text)) {
        ctx.addIssue({ code: "custom", message: `RUNTIME_URL must be an http(s) address such as http://127.0.0.1:2375, got "${raw}"` });
        return z.NEVER;
      }
      return text.replace(/\/$/, "");
    }),
  /** Apps answer at `<subdomain>.<APPS_DOMAIN>`. */
  APPS_DOMAIN: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = (raw ?? "").trim().toLowerCase() || "localhost";
      if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(text)) {
        ctx.addIssue({ code: "custom", message: `APPS_DOMAIN must be a DNS name such as apps.example.net, got "${raw}"` });
        return z.NEVER;
      }
      return text;
    }),
  PROBE_TIMEOUT_SECONDS: seconds("PROBE_TIMEOUT_SECONDS", 60),
  /** How often the controller checks a running app's instance with the app's health check. */
  HEALTH_CHECK_INTERVAL_SECONDS: seconds("HEALTH_CHECK_INTERVAL_SECONDS", 30),
  /** How long a build may run before it is cancelled on the engine and the deploy fails. */
  BUILD_TIMEOUT_SECONDS: seconds("BUILD_TIMEOUT_SECONDS", 900),
  /** Memory and CPUs of a build's steps; default the largest plan's (pro). */
  BUILD_MEMORY_MB: seconds("BUILD_MEMORY_MB", PLANS.pro.memoryMb, 6),
  BUILD_CPUS: decimal("BUILD_CPUS", PLANS.pro.cpus),
  /** How large a build's image may grow, base image included, before the build is stopped (classic builder). */
  BUILD_DISK_MB: seconds("BUILD_DISK_MB", 10240, 16),
  /** Caps of a deploy's source archive: unpacked bytes, entries, and the time to fetch and unpack it. */
  SOURCE_MAX_BYTES: seconds("SOURCE_MAX_BYTES", 1024 ** 3),
  SOURCE_MAX_ENTRIES: seconds("SOURCE_MAX_ENTRIES", 100_000),
  SOURCE_TIMEOUT_SECONDS: seconds("SOURCE_TIMEOUT_SECONDS", 300),
  /** Sources on http, loopback or private addresses (a dev forge); off where the Worker is deployed. */
  ALLOW_LOCAL_SOURCES: flag("ALLOW_LOCAL_SOURCES", false),
  /** A subdomain an account released (app deleted or renamed) is held for that account this many days; 0: not held. */
  SUBDOMAIN_HOLD_DAYS: seconds("SUBDOMAIN_HOLD_DAYS", 30, 0),
  /** Live log streams (console SSE) open at once per account; one more is refused with 429. */
  LOG_STREAMS_PER_ACCOUNT: seconds("LOG_STREAMS_PER_ACCOUNT", 10),
  /**
   * How long an app's instance has to send its response headers once the request has reached it;
   * past that the proxy answers 504. Only the wait for headers: a streaming body is never cut.
   * 100 s is the bound Cloudflare itself puts on an origin's first answer.
   */
  PROXY_HEADER_TIMEOUT_SECONDS: seconds("PROXY_HEADER_TIMEOUT_SECONDS", 100),
  /** Count each app's requests for its metrics (docs/metrics.md); off only to measure what counting costs. */
  METRICS_COLLECTION: flag("METRICS_COLLECTION", true),
  /** The longest counts wait in an isolate before they are written to the app's metrics (0: at once, for tests). */
  METRICS_FLUSH_SECONDS: seconds("METRICS_FLUSH_SECONDS", 10, 0),
  /**
   * After a switch, the instance that served before keeps running this long so requests already
   * sent to it finish (at least 2 s, more than the proxy remembers a route); then it gets SIGTERM
   * and STOP_GRACE_SECONDS to exit before it is killed.
   */
  DRAIN_SECONDS: seconds("DRAIN_SECONDS", 30, 2),
  STOP_GRACE_SECONDS: seconds("STOP_GRACE_SECONDS", 10, 0),
  /**
   * The reconciler (src/apps/reconcile.ts) removes an instance, image or port row no record explains
   * only once it is older than this: a change may be making it right now.
   */
  RECONCILE_GRACE_SECONDS: seconds("RECONCILE_GRACE_SECONDS", 300, 0),
  /**
   * Host address instances' ports are published on: the one the Worker reaches them at. Empty:
   * loopback for an engine on this machine, else the engine's address when it is an IP address.
   */
  INSTANCE_BIND_ADDRESS: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = raw?.trim() ?? "";
      if (text === "") return "";
      if (text === "0.0.0.0" || text === "::" || !/^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]+)$/.test(text)) {
        ctx.addIssue({ code: "custom", message: `INSTANCE_BIND_ADDRESS must be one IP address of the engine's host (not every interface), got "${raw}"` });
        return z.NEVER;
      }
      return text;
    }),
  /**
   * SQL bytes one queue invocation of an export job dumps (and archive bytes it copies) before it
   * stores a checkpoint and leaves the rest to the next invocation. 1 GiB is about half of what
   * one invocation managed within the platform's limits (5 minutes CPU, 15 minutes wall).
   */
  EXPORT_INVOCATION_BYTES: seconds("EXPORT_INVOCATION_BYTES", 1024 ** 3),
  /**
   * Bytes of earlier row versions a database keeps so that a running export stays the snapshot it
   * began with while writes go on; a database that changes more than this during one export fails
   * that export (the database itself is not affected).
   */
  EXPORT_JOURNAL_MAX_BYTES: seconds("EXPORT_JOURNAL_MAX_BYTES", 1024 ** 3),
  /** Bearer token of the operator routes (/admin/api); empty: they refuse every call. */
  OPERATOR_TOKEN: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const text = raw?.trim() ?? "";
      if (text !== "" && text.length < 32) {
        ctx.addIssue({ code: "custom", message: "OPERATOR_TOKEN must be at least 32 characters (or empty, to turn the operator routes off)" });
        return z.NEVER;
      }
      return text;
    }),
  LINK_SIGNING_KEYS: signingKeys(),
  /** A list of `<kid>:<key>` newest first, or one bare key (its kid is `default`). */
  ENV_ENCRYPTION_KEY: encryptionKeys(),
  ...DOMAIN_SETTINGS,
  ...RUNTIME_SETTINGS,
})
  .superRefine(domainSettingsProblems)
  .superRefine(runtimeSettingsProblems);

export type Config = z.output<typeof ConfigSchema>;
export type SigningKey = Config["LINK_SIGNING_KEYS"][number];
export type EncryptionKey = Config["ENV_ENCRYPTION_KEY"][number];

/** The settings with their defaults, as documented in the README's configuration table. */
export const SETTING_DEFAULTS = {
  EXPORT_COOLDOWN_SECONDS: 300,
  LINK_TTL_SECONDS: 1800,
  ARCHIVE_RETENTION_SECONDS: 86400,
  RATE_LIMIT_PER_MINUTE: 120,
  RATE_LIMIT_BURST: 30,
  PENDING_RETRY_AFTER_SECONDS: 2,
  IN_FLIGHT_RETRY_AFTER_SECONDS: 5,
  RUNTIME_URL: "",
  APPS_DOMAIN: "localhost",
  PROBE_TIMEOUT_SECONDS: 60,
  HEALTH_CHECK_INTERVAL_SECONDS: 30,
  PROXY_HEADER_TIMEOUT_SECONDS: 100,
  METRICS_COLLECTION: true,
  METRICS_FLUSH_SECONDS: 10,
  DRAIN_SECONDS: 30,
  STOP_GRACE_SECONDS: 10,
  RECONCILE_GRACE_SECONDS: 300,
  BUILD_TIMEOUT_SECONDS: 900,
  BUILD_MEMORY_MB: PLANS.pro.memoryMb,
  BUILD_CPUS: PLANS.pro.cpus,
  BUILD_DISK_MB: 10240,
  SOURCE_MAX_BYTES: 1024 ** 3,
  SOURCE_MAX_ENTRIES: 100_000,
  SOURCE_TIMEOUT_SECONDS: 300,
  ALLOW_LOCAL_SOURCES: false,
  SUBDOMAIN_HOLD_DAYS: 30,
  LOG_STREAMS_PER_ACCOUNT: 10,
  INSTANCE_BIND_ADDRESS: "",
  EXPORT_INVOCATION_BYTES: 1024 ** 3,
  EXPORT_JOURNAL_MAX_BYTES: 1024 ** 3,
  ...DOMAIN_SETTING_DEFAULTS,
  ...RUNTIME_SETTING_DEFAULTS,
} as const;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Validates raw variables; throws ConfigError with one line per bad variable. */
export function parseConfig(vars: Record<string, unknown>): Config {
  const result = ConfigSchema.safeParse(vars);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? "config");
    return issue.message.includes(name) ? issue.message : `${name}: ${issue.message}`;
  });
  throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
}

const cache = new WeakMap<object, Config>();

/** The validated settings of this env, parsed once per env object. */
export function getConfig(env: Env): Config {
  let config = cache.get(env);
  if (!config) {
    config = parseConfig(env as unknown as Record<string, unknown>);
    cache.set(env, config);
  }
  return config;
}
