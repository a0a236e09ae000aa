import { z } from "@hono/zod-openapi";
import { HEALTH_EXPECTS } from "../../apps/health";
import { APP_STATUSES, DEPLOY_KINDS, DEPLOY_STATUSES, PORT_SOURCES } from "../../db/schema";
import { pathParam } from "./openapi";

/**
 * The app and deploy JSON of the console's routes as zod schemas, for the OpenAPI document and
 * the routes' reply types (src/apps/views.ts builds the values).
 */

const isoTime = (description: string) => z.string().openapi({ format: "date-time", description });
const nullableIso = (description: string) => isoTime(description).nullable();

export const AppIdParams = z.object({ id: pathParam("id", "The app's id.") });
export const DeployParams = z.object({ id: pathParam("id", "The app's id."), deployId: pathParam("deployId", "The deploy's id.") });

export const DeployJson = z
  .object({
    id: z.string(),
    status: z.enum(DEPLOY_STATUSES),
    kind: z.enum(DEPLOY_KINDS).openapi({ description: "`deploy` (Deploy pressed), `rollback` (an earlier image run again) or `push` (a push to the branch)." }),
    commit: z.object({ sha: z.string(), message: z.string() }).nullable().openapi({ description: "The commit built, when the forge said." }),
    image_digest: z.string().nullable(),
    plan: z.string().nullable(),
    env_version: z.number().int().nullable(),
    rollback_of: z.string().nullable(),
    rollback_available: z.boolean().openapi({ description: "Its image is kept and it is not the one the app runs now." }),
    started_at: isoTime("When it started."),
    finished_at: nullableIso("When it went live or failed."),
    port: z.number().int().nullable(),
    port_source: z.enum(PORT_SOURCES).nullable(),
    port_reason: z.string().nullable(),
    failure: z.object({ kind: z.string(), message: z.string() }).optional(),
  })
  .openapi("Deploy");

/** A deploy right after it was asked for: the record, or its id and first status when it cannot be read yet. */
export const StartedDeployJson = z.object({
  deploy: z.union([DeployJson, z.object({ id: z.string(), status: z.enum(["building", "starting"]) })]),
});

const InstanceJson = z.object({
  state: z.enum(["running", "restarting", "crashed"]),
  restarts: z.number().int(),
  exit_code: z.number().int().nullable(),
  oom_killed: z.boolean(),
  output: z.string().optional().openapi({ description: "The last 50 lines of a crashed instance's output." }),
});

const EnvStateJson = z.object({
  version: z.number().int(),
  applied_version: z.number().int(),
  applying: z.boolean(),
  failure: z.object({ version: z.number().int(), message: z.string(), log: z.string() }).nullable(),
});

const BillingJson = z.object({
  charged: z.boolean(),
  price: z.number().int().nullable().openapi({ description: "Paid for the current period, in cents." }),
  next_price: z.number().int(),
  period_start: nullableIso("Start of the paid period."),
  period_end: nullableIso("End of the paid period."),
  stopped_since: nullableIso("Since when the app is stopped."),
  payment_due: z.boolean(),
});

export const AppJson = z
  .object({
    id: z.string(),
    name: z.string(),
    repository: z.string(),
    branch: z.string(),
    root_directory: z.string(),
    dockerfile_path: z.string(),
    subdomain: z.string(),
    hostname: z.string(),
    url: z.string(),
    plan: z.string(),
    status: z.enum(APP_STATUSES),
    deploy_in_progress: z.boolean(),
    port: z.number().int().nullable(),
    port_source: z.enum(PORT_SOURCES).nullable(),
    port_reason: z.string().nullable(),
    created_at: isoTime("When the app was created."),
    latest_deploy: DeployJson.nullable(),
    env: EnvStateJson,
    billing: BillingJson,
    instance: InstanceJson.nullable().openapi({ description: "The serving instance as the engine reports it; null when none serves." }),
    last_restart: z.object({ at: isoTime("When."), reason: z.string() }).nullable(),
    health_check: z.object({ path: z.string(), expect: z.enum(HEALTH_EXPECTS), timeout_seconds: z.number().int(), grace_seconds: z.number().int() }),
    health: z.object({ state: z.enum(["healthy", "unhealthy", "unknown"]), last_failure: z.object({ at: isoTime("When."), message: z.string() }).nullable() }),
    source_token_set: z.boolean(),
    webhook: z.object({ url: z.string(), secret_set: z.boolean() }),
  })
  .openapi("App");

export const SuccessJson = z.object({ success: z.literal(true) });
