import type { z } from "zod";
import { getConfig } from "../config";
import { sealSourceToken } from "../source/token";
import { generatedSubdomain } from "./contract/subdomain";
import { type HealthCheckSettings, healthSettings } from "./health";
import type { AppSettingsRequest, NewAppRequest } from "./settings";
import { updateAppSettings } from "./app-columns";
import { type AppRow, getApp, insertApp, isSubdomainTaken } from "./store";
import { heldFromAccount, holdOf, holdSubdomain, subdomainHeldMessage } from "./subdomain-holds";

/** Two writes racing for one subdomain: the unique index decides, and the loser gets SUBDOMAIN_TAKEN. */
const isUniqueViolation = (err: unknown) => err instanceof Error && /UNIQUE/i.test(err.message);

/**
 * Creating an app and changing its settings, shared by the console's JSON routes and its pages:
 * the checks that need the records (a subdomain in use, a subdomain fixed by the first deploy).
 * The shape of each field is checked before, by the zod requests in settings.ts.
 */

/** docs/apps.md, Subdomain: unique across the service. */
export const SUBDOMAIN_TAKEN = "This subdomain is already in use. Choose another.";
/** docs/apps.md, Subdomain: changeable until the first deploy. */
export const SUBDOMAIN_FIXED = "The subdomain can only be changed until the first deploy.";

/** The app as saved, or the field that was refused and why. */
export type SettingsOutcome = { ok: true; app: AppRow } | { ok: false; field: "subdomain"; message: string };

/** The record's columns for the settings' JSON fields (an absent one stays undefined). */
function sourceColumns<T extends { name?: string; repository?: string; branch?: string; root_directory?: string; dockerfile_path?: string }>(input: T) {
  return { name: input.name, repository: input.repository, branch: input.branch, rootDirectory: input.root_directory, dockerfilePath: input.dockerfile_path } as {
    name: T["name"];
    repository: T["repository"];
    branch: T["branch"];
    rootDirectory: T["root_directory"];
    dockerfilePath: T["dockerfile_path"];
  };
}

/**
 * The health check given, over the app's current one (an absent field stays); a changed check
 * starts its count afresh, so failures under the old path never restart the app.
 */
function healthColumns(app: AppRow, input: z.output<typeof AppSettingsRequest>["health_check"]): { healthCheck?: HealthCheckSettings; health?: null } {
  if (input === undefined) return {};
  const current = healthSettings(app.healthCheck);
  const next: HealthCheckSettings = {
    path: input.path ?? current.path,
    expect: input.expect ?? current.expect,
    timeoutSeconds: input.timeout_seconds ?? current.timeoutSeconds,
    graceSeconds: input.grace_seconds ?? current.graceSeconds,
  };
  return { healthCheck: next, health: null };
}

/**
 * A saved access token belongs to its forge: when the repository moves to another origin and no
 * new token comes with it, the token is removed (null) rather than sent to the new host.
 */
function tokenDropped(app: AppRow, repository: string | undefined): null | undefined {
  if (app.sourceToken === null || repository === undefined) return undefined;
  return new URL(repository).origin === new URL(app.repository).origin ? undefined : null;
}

/**
 * Why `accountId` may not take `subdomain` (another app has it, or another account released it
 * less than SUBDOMAIN_HOLD_DAYS ago), or null. In that order: a release writes its hold before the
 * app lets the name go, so whoever sees the name free also sees its hold.
 */
async function subdomainRefusal(env: Env, subdomain: string, accountId: string, now: number, exceptAppId?: string): Promise<string | null> {
  if (await isSubdomainTaken(env, subdomain, exceptAppId)) return SUBDOMAIN_TAKEN;
  const hold = await holdOf(env, subdomain);
  return heldFromAccount(hold, accountId, now) ? subdomainHeldMessage(hold!.heldUntil) : null;
}

/** Creates an app (not deployed; the first deploy starts only when Deploy is pressed). */
export async function createApp(env: Env, input: NewAppRequest & { accountId: string; id: string; now: number }): Promise<SettingsOutcome> {
  const subdomain = input.subdomain ?? generatedSubdomain(input.id);
  const refusal = await subdomainRefusal(env, subdomain, input.accountId, input.now);
  if (refusal) return { ok: false, field: "subdomain", message: refusal };
  try {
    const app = await insertApp(env, {
      id: input.id,
      accountId: input.accountId,
      ...sourceColumns(input),
      subdomain,
      plan: input.plan,
      createdAt: input.now,
    });
    return { ok: true, app };
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, field: "subdomain", message: SUBDOMAIN_TAKEN };
    throw err;
  }
}

/**
 * Saves the settings given (an absent field stays as it is). A new subdomain is refused after the
 * first deploy, when another app has it and while another account's hold keeps it; blank gives
 * the generated one back, and the old one is held for the account (subdomain-holds.ts). Run by the app's
 * AppController with its change mark held, on the record read under that mark, so the first
 * deploy cannot land between the check and the write.
 */
export async function changeAppSettings(env: Env, app: AppRow, input: z.output<typeof AppSettingsRequest>): Promise<SettingsOutcome> {
  let subdomain = input.subdomain;
  if (subdomain !== undefined && subdomain !== app.subdomain) {
    if (app.firstDeployAt !== null) return { ok: false, field: "subdomain", message: SUBDOMAIN_FIXED };
    subdomain = subdomain || generatedSubdomain(app.id);
    const now = Date.now();
    const refusal = await subdomainRefusal(env, subdomain, app.accountId, now, app.id);
    if (refusal) return { ok: false, field: "subdomain", message: refusal };
    // The old name is held before the app lets it go.
    await holdSubdomain(env, { subdomain: app.subdomain, accountId: app.accountId, now, holdDays: getConfig(env).SUBDOMAIN_HOLD_DAYS });
  }
  const sourceToken =
    input.source_token === undefined
      ? tokenDropped(app, input.repository)
      : input.source_token === null
        ? null
        : await sealSourceToken(getConfig(env).ENV_ENCRYPTION_KEY, app.id, input.source_token);
  const settings = Object.fromEntries(Object.entries({ ...sourceColumns(input), subdomain, sourceToken, ...healthColumns(app, input.health_check) }).filter(([, value]) => value !== undefined));
  try {
    await updateAppSettings(env, app.id, settings);
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, field: "subdomain", message: SUBDOMAIN_TAKEN };
    throw err;
  }
  return { ok: true, app: (await getApp(env, app.id))! };
}
