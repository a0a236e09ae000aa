import { appController } from "../../apps/app-controller";
import { type AppRow, NO_SUCH_APP } from "../../apps/store";
import type { PasteMode } from "../../envvars/diff";
import { INVALID_ENV_MESSAGE, type PastePlan, planPaste } from "../../envvars/edit";
import { type EnvVariable, type RowError, validateVariables } from "../../envvars/rules";
import { ENV_CHANGED_MESSAGE, type EnvEffect } from "../../envvars/save";
import { type EnvSet, readEnv } from "../../envvars/store";
import { notFound } from "../../http/errors";
import type { Caller } from "./caller";
import { type Outcome, type Refusal, refuse } from "./outcome";

/**
 * An app's environment variables (docs/envvars.md), for the JSON routes (api/env.ts) and the
 * Environment tab's forms (pages/env-pages.tsx) alike. Values travel in clear only to the app's
 * owner and are never logged; every save goes through the app's AppController.
 */

/** Rows that break the rules: nothing was saved; `errors` says why, row by row. */
export interface InvalidRows extends Refusal {
  code: "INVALID_ENV";
  errors: RowError[];
}

export const invalidRows = (errors: RowError[]): InvalidRows => ({ ok: false, code: "INVALID_ENV", message: INVALID_ENV_MESSAGE, errors });

/** The app's saved set. */
export async function readVariables(caller: Caller, app: AppRow): Promise<EnvSet> {
  const set = await readEnv(caller.env, app.id);
  if (!set) throw notFound(NO_SUCH_APP);
  return set;
}

/**
 * Saves a whole set loaded at `version`: refused when a row breaks a rule (INVALID_ENV), when the
 * set changed since (ENV_CHANGED) or while a deploy runs; else what the save did (docs/envvars.md, rule 6).
 */
export async function saveVariables(caller: Caller, app: AppRow, version: number, variables: EnvVariable[]): Promise<Outcome<{ version: number; effect: EnvEffect }> | InvalidRows> {
  const errors = validateVariables(variables);
  return errors.length > 0 ? invalidRows(errors) : storeVariables(caller, app, version, variables);
}

/** Saves a set already checked (a paste's result): refused when the set changed since `version` or while a deploy runs. */
export async function storeVariables(caller: Caller, app: AppRow, version: number, variables: EnvVariable[]): Promise<Outcome<{ version: number; effect: EnvEffect }>> {
  const result = await appController(caller.env, app.id).saveEnv({ appId: app.id, version, variables, now: caller.deps.now() });
  if (result.outcome === "refused") return refuse(result.code, result.message);
  return { ok: true, version: result.version, effect: result.effect };
}

/** A paste as typed: the text, merge or replace, and the confirmation word when replace deletes. */
export interface Paste {
  version: number;
  text: string;
  mode: PasteMode;
  confirm?: string;
}

/** What a paste would do to the saved set (nothing is written): refused when the set changed since it was loaded. */
export async function planVariablesPaste(caller: Caller, app: AppRow, paste: Paste): Promise<Outcome<{ set: EnvSet; plan: PastePlan }>> {
  const set = await readVariables(caller, app);
  if (set.version !== paste.version) return refuse("ENV_CHANGED", ENV_CHANGED_MESSAGE);
  return { ok: true, set, plan: planPaste(set.variables, paste) };
}
