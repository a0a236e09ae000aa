import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getConfig } from "../../src/config";
import { database } from "../../src/db/client";
import { appEnvVars } from "../../src/db/schema";
import { openValue, sealValue } from "../../src/lib/sealing";
import { writeEnv } from "../../src/apps/env-apply";
import { readEnv } from "../../src/envvars/store";
import { type AppJson, signedUpClient } from "./apps-helpers";

// SPEC.md, Resources "Environment variable": "Values are encrypted at rest and kept without
// history." Issue 14: AES-GCM with the app id and key name as associated data.

let n = 0;
async function newAppId(): Promise<string> {
  const client = await signedUpClient();
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Env", repository: "https://example.com/acme/env", subdomain: `env-${Date.now() % 100000}-${++n}` });
  return app.id;
}

const SECRET = "postgres://user:hunter2-clear-text@db.internal/app";

describe("environment variable storage", () => {
  it("keeps only ciphertext in D1, which opens only for its own app and key", async () => {
    const appId = await newAppId();
    const otherApp = await newAppId();
    await writeEnv(env, appId, 1, [{ key: "DATABASE_URL", value: SECRET }]);
    const rows = await database(env).select().from(appEnvVars).where(eq(appEnvVars.appId, appId));
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(JSON.stringify(row)).not.toContain("hunter2");
    expect(atob(row.ciphertext)).not.toContain("hunter2");
    const raw = await env.DB.prepare("SELECT * FROM app_env_vars WHERE app_id = ?").bind(appId).all();
    expect(JSON.stringify(raw.results)).not.toContain("hunter2");

    const keys = getConfig(env).ENV_ENCRYPTION_KEY;
    expect(await openValue(keys, { appId, key: "DATABASE_URL" }, row)).toBe(SECRET);
    await expect(openValue(keys, { appId: otherApp, key: "DATABASE_URL" }, row)).rejects.toThrow();
    await expect(openValue(keys, { appId, key: "OTHER_KEY" }, row)).rejects.toThrow();
  });

  it("a moved row does not decrypt in another app", async () => {
    const appId = await newAppId();
    const otherApp = await newAppId();
    await writeEnv(env, appId, 1, [{ key: "TOKEN", value: "abc" }]);
    const row = (await database(env).select().from(appEnvVars).where(eq(appEnvVars.appId, appId)).get())!;
    await database(env).insert(appEnvVars).values({ ...row, appId: otherApp });
    await expect(readEnv(env, otherApp)).rejects.toThrow();
  });

  it("overwrites without history and keeps the editor order and the version", async () => {
    const appId = await newAppId();
    expect(await readEnv(env, appId)).toEqual({ version: 0, variables: [] });
    await writeEnv(env, appId, 1, [{ key: "B", value: "old" }, { key: "A", value: "1" }]);
    await writeEnv(env, appId, 2, [{ key: "Z", value: "" }, { key: "B", value: "new" }]);
    expect(await readEnv(env, appId)).toEqual({ version: 2, variables: [{ key: "Z", value: "" }, { key: "B", value: "new" }] });
    expect(await database(env).select().from(appEnvVars).where(eq(appEnvVars.appId, appId))).toHaveLength(2);
  });

  it("opens values sealed with an older key after a newer one is added (rotation)", async () => {
    const [current] = getConfig(env).ENV_ENCRYPTION_KEY;
    const sealed = await sealValue([current!], { appId: "a", key: "K" }, "v");
    const rotated = [{ kid: "new", key: "YWJjZGVmMDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODk=" }, current!];
    expect(await openValue(rotated, { appId: "a", key: "K" }, sealed)).toBe("v");
    expect((await sealValue(rotated, { appId: "a", key: "K" }, "v")).kid).toBe("new");
  });
});
