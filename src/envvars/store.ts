import { asc, eq } from "drizzle-orm";
import { getConfig } from "../config";
import { database } from "../db/client";
import { appEnvVars } from "../db/schema";
import { envVersionQuery } from "../apps/store";
import { openValue, sealValue } from "../lib/sealing";
import type { EnvVariable } from "./rules";

/*
 * Owner of the `app_env_vars` table: every query of it is here (test/unit/table-owners.test.ts).
 * The set's version lives on the app's record: read through src/apps/store.ts, written by the app's
 * controller with the rows (src/apps/env-apply.ts).
 */

/** An app's variable set as saved: its version and the clear values (in memory only). */
export interface EnvSet {
  version: number;
  variables: EnvVariable[];
}

/** D1 binds at most 100 parameters per statement; a row has 6, so a multi-row insert takes 16 rows. */
const ROWS_PER_INSERT = Math.floor(100 / 6);

/** The app's variables, decrypted, in editor order; null when the app has no record. */
export async function readEnv(env: Env, appId: string): Promise<EnvSet | null> {
  const db = database(env);
  const [app, rows] = await db.batch([
    envVersionQuery(env, appId),
    db.select().from(appEnvVars).where(eq(appEnvVars.appId, appId)).orderBy(asc(appEnvVars.position)),
  ]);
  if (!app[0]) return null;
  const keys = getConfig(env).ENV_ENCRYPTION_KEY;
  const variables = await Promise.all(rows.map(async (row) => ({ key: row.key, value: await openValue(keys, { appId, key: row.key }, row) })));
  return { version: app[0].version, variables };
}

/** The variables as a launch needs them: the version and a key-to-value record. */
export async function launchEnv(env: Env, appId: string): Promise<{ version: number; env: Record<string, string> }> {
  const set = await readEnv(env, appId);
  return { version: set?.version ?? 0, env: Object.fromEntries((set?.variables ?? []).map((v) => [v.key, v.value])) };
}

/**
 * The writes that replace the app's set with `variables` (sealed one by one), for one D1 batch with
 * the set's new version on the app (src/apps/env-apply.ts writeEnv). The AppController runs it
 * with the change mark held, so no other save runs meanwhile.
 */
export async function envRowWrites(env: Env, appId: string, variables: readonly EnvVariable[]) {
  const keys = getConfig(env).ENV_ENCRYPTION_KEY;
  const sealed = await Promise.all(variables.map((v) => sealValue(keys, { appId, key: v.key }, v.value)));
  const rows = variables.map((v, position) => ({ appId, key: v.key, position, ...sealed[position]! }));
  const db = database(env);
  const inserts = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) inserts.push(db.insert(appEnvVars).values(rows.slice(i, i + ROWS_PER_INSERT)));
  return [db.delete(appEnvVars).where(eq(appEnvVars.appId, appId)), ...inserts];
}
