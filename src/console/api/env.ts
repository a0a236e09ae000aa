import { type Context, Hono } from "hono";
import { appController } from "../../apps/app-controller";
import { getOwnedApp } from "../../apps/store";
import { EnvPasteRequest, EnvPutRequest, INVALID_ENV_MESSAGE, confirmationMessage, planPaste } from "../../envvars/edit";
import type { EnvVariable, RowError } from "../../envvars/rules";
import { validateVariables } from "../../envvars/rules";
import { ENV_CHANGED_MESSAGE } from "../../envvars/save";
import { readEnv } from "../../envvars/store";
import type { AppEnv } from "../../http/context";
import { ApiError, type ErrorCode, notFound } from "../../http/errors";
import { readJson } from "../../http/validate";

type Route = Context<AppEnv>;

const invalidEnv = (errors: RowError[]) => new ApiError("INVALID_ENV", INVALID_ENV_MESSAGE, { extra: { errors } });

/** The viewer's app and its saved set (another account's app answers 404 like a missing one). */
async function ownedSet(c: Route) {
  const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id")!);
  const set = await readEnv(c.env, app.id);
  if (!set) throw notFound("No app with this id exists in your account.");
  return { app, set };
}

/** Saves a whole set through the app's controller: `{version, variables, effect}` or the refusal's envelope. */
async function save(c: Route, appId: string, version: number, variables: EnvVariable[]) {
  const result = await appController(c.env, appId).saveEnv({ appId, version, variables, now: c.get("deps").now() });
  if (result.outcome === "refused") throw new ApiError(result.code as ErrorCode, result.message);
  return c.json({ version: result.version, variables, effect: result.effect });
}

/**
 * The console's JSON routes for an app's environment variables (issue 14), under
 * `/console/api/apps` and its session guard. Values travel in clear only here, to the app's owner;
 * they are never logged.
 */
export const envRoutes = new Hono<AppEnv>()
  .get("/:id/env", async (c) => {
    const { set } = await ownedSet(c);
    return c.json({ version: set.version, variables: set.variables });
  })
  .put("/:id/env", async (c) => {
    const app = await getOwnedApp(c.env, c.get("accountId")!, c.req.param("id"));
    const input = await readJson(c, EnvPutRequest);
    const errors = validateVariables(input.variables);
    if (errors.length > 0) throw invalidEnv(errors);
    return save(c, app.id, input.version, input.variables);
  })
  .post("/:id/env/paste", async (c) => {
    const input = await readJson(c, EnvPasteRequest);
    const { app, set } = await ownedSet(c);
    if (set.version !== input.version) throw new ApiError("ENV_CHANGED", ENV_CHANGED_MESSAGE);
    const plan = planPaste(set.variables, input);
    if (plan.kind === "invalid") throw invalidEnv(plan.errors);
    if (input.dry_run) return c.json(plan.diff);
    if (plan.kind === "needs_confirmation") {
      throw new ApiError("CONFIRMATION_REQUIRED", confirmationMessage(plan.removed), { extra: { removed: plan.removed } });
    }
    return save(c, app.id, input.version, plan.next);
  });
