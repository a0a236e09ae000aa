import { ROUTE_TTL_MS } from "../../src/routing/route-cache";
import { runInDurableObject } from "cloudflare:test";
import { env, exports as workerExports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { appController } from "../../src/apps/app-controller";
import { database } from "../../src/db/client";
import { appEnvVars, apps } from "../../src/db/schema";
import { DockerRuntime } from "../../src/runtime";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { ConsoleClient } from "./helpers";

// Issue 14, "Console and JSON routes" and "Saving" (SPEC.md, contract items 5-7, Errors "Console
// validation messages" and "Console save conflicts"). The engine is the fake Docker Engine at its
// HTTP boundary (RUNTIME_URL); the forge a stand-in.

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

interface EnvJson {
  version: number;
  variables: { key: string; value: string }[];
}
interface SavedJson extends EnvJson {
  effect: "stored" | "applying" | "unchanged";
}
interface AppEnvJson extends AppJson {
  instance?: unknown;
  env: { version: number; applied_version: number; applying: boolean; failure: { message: string; log: string } | null };
}

/** A page printing GREETING through CGI, as a busybox httpd app does. */
function cgiFiles(options: { buildSeconds?: number } = {}) {
  return { ...httpdFiles("<p>home</p>", options), "www/cgi-bin/env": 'echo "Content-Type: text/plain"\necho ""\necho "GREETING=$GREETING"\n' };
}

async function newApp(files: Record<string, string> = cgiFiles(), client?: ConsoleClient) {
  const owner = client ?? (await signedUpClient());
  const repository = await publishRepository(unique("envrepo"), files);
  const app = await owner.json<AppEnvJson>("POST", "/console/api/apps", { name: "Env", repository, subdomain: unique("env") });
  return { client: owner, app };
}

const envPath = (id: string) => `/console/api/apps/${id}/env`;
const put = (client: ConsoleClient, id: string, body: unknown) => client.call("PUT", envPath(id), body);
const paste = (client: ConsoleClient, id: string, body: unknown) => client.call("POST", `${envPath(id)}/paste`, body);

async function appRow(id: string) {
  return (await database(env).select().from(apps).where(eq(apps.id, id)).get())!;
}

async function waitForEnv(client: ConsoleClient, id: string): Promise<AppEnvJson> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const app = await client.json<AppEnvJson>("GET", `/console/api/apps/${id}`);
    if (!app.env.applying) return app;
    if (Date.now() > deadline) throw new Error("variables still being applied");
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("environment variable routes", () => {
  it("GET starts at version 0; PUT before the first deploy only stores (effect stored) and the app JSON says so", async () => {
    const { client, app } = await newApp();
    expect(app.env).toEqual({ version: 0, applied_version: 0, applying: false, failure: null });
    expect(await client.json<EnvJson>("GET", envPath(app.id))).toEqual({ version: 0, variables: [] });

    const variables = [{ key: "GREETING", value: "hello" }, { key: "PORTAL", value: "${HOME}/$(whoami)" }];
    const res = await put(client, app.id, { version: 0, variables });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ version: 1, variables, effect: "stored" });
    expect(await client.json<EnvJson>("GET", envPath(app.id))).toEqual({ version: 1, variables });
    const after = await client.json<AppEnvJson>("GET", `/console/api/apps/${app.id}`);
    expect(after.env).toEqual({ version: 1, applied_version: 0, applying: false, failure: null });
    expect(after.status).toBe("not_deployed");
    expect((await appRow(app.id)).instanceId).toBeNull();

    // Deleting the app deletes its variables.
    expect((await client.call("DELETE", `/console/api/apps/${app.id}`)).status).toBe(200);
    expect(await database(env).select().from(appEnvVars).where(eq(appEnvVars.appId, app.id))).toEqual([]);
  });

  it("stores a value of exactly 65,536 bytes (multi-byte characters counted as bytes) and a set of many variables", async () => {
    const { client, app } = await newApp();
    const big = "é".repeat(32_768);
    const many = Array.from({ length: 150 }, (_, i) => ({ key: `VAR_${i}`, value: `value ${i}` }));
    const variables = [{ key: "BIG", value: big }, ...many];
    const res = await put(client, app.id, { version: 0, variables });
    expect(res.status).toBe(200);
    expect(await client.json<EnvJson>("GET", envPath(app.id))).toEqual({ version: 1, variables });
    const over = await put(client, app.id, { version: 1, variables: [{ key: "BIG", value: `${big}a` }] });
    expect(((await over.json()) as { errors: unknown }).errors).toEqual([{ row: 0, key: "BIG", messages: ["This value exceeds the 64 KiB limit."] }]);
  });

  it("refuses invalid rows with 400 INVALID_ENV, every row's messages at once, and writes nothing", async () => {
    const { client, app } = await newApp();
    const res = await put(client, app.id, {
      version: 0,
      variables: [
        { key: "OK", value: "1" },
        { key: "PORT", value: "80" },
        { key: "port", value: "80" },
        { key: "1ABC", value: "x" },
        { key: "BIG", value: "a".repeat(65_537) },
        { key: "FITS", value: "a".repeat(65_536) },
      ],
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      success: false,
      code: "INVALID_ENV",
      error: "Some variables cannot be saved; nothing was saved. Each row's messages say why.",
      errors: [
        { row: 1, key: "PORT", messages: ["PORT is reserved by the platform."] },
        { row: 2, key: "port", messages: ["port is reserved by the platform.", "Use uppercase letters, digits, and underscores for the key."] },
        { row: 3, key: "1ABC", messages: ["Use uppercase letters, digits, and underscores for the key."] },
        { row: 4, key: "BIG", messages: ["This value exceeds the 64 KiB limit."] },
      ],
    });
    expect(await client.json<EnvJson>("GET", envPath(app.id))).toEqual({ version: 0, variables: [] });
    expect(await database(env).select().from(appEnvVars).where(eq(appEnvVars.appId, app.id))).toEqual([]);
  });

  it("refuses a stale version with 409 ENV_CHANGED and writes nothing", async () => {
    const { client, app } = await newApp();
    await put(client, app.id, { version: 0, variables: [{ key: "A", value: "first" }] });
    const stale = await put(client, app.id, { version: 0, variables: [{ key: "A", value: "second" }] });
    expect(stale.status).toBe(409);
    expect(await stale.json()).toEqual({ success: false, code: "ENV_CHANGED", error: "Environment variables changed. Refresh and re-apply your changes." });
    const stalePaste = await paste(client, app.id, { version: 0, text: "A=third" });
    expect(stalePaste.status).toBe(409);
    expect(((await stalePaste.json()) as { code: string }).code).toBe("ENV_CHANGED");
    expect(await client.json<EnvJson>("GET", envPath(app.id))).toEqual({ version: 1, variables: [{ key: "A", value: "first" }] });
  });

  it("an identical save is a no-op: effect unchanged, no new version", async () => {
    const { client, app } = await newApp();
    await put(client, app.id, { version: 0, variables: [{ key: "A", value: "1" }, { key: "B", value: "2" }] });
    const res = await put(client, app.id, { version: 1, variables: [{ key: "B", value: "2" }, { key: "A", value: "1" }] });
    expect(await res.json()).toMatchObject({ version: 1, effect: "unchanged" });
    const pasted = await paste(client, app.id, { version: 1, text: "A=1\n" });
    expect(await pasted.json()).toMatchObject({ version: 1, effect: "unchanged" });
    expect((await appRow(app.id)).envVersion).toBe(1);
  });

  it("paste: dry run previews and writes nothing; replace needs confirm REPLACE (409 CONFIRMATION_REQUIRED with the keys)", async () => {
    const { client, app } = await newApp();
    await put(client, app.id, { version: 0, variables: [{ key: "KEEP", value: "k" }, { key: "CHANGE", value: "old" }, { key: "DROP", value: "d" }] });
    const text = "# comment\nexport CHANGE=new\nKEEP=k\nNEW=abc#def #note\n";

    const dry = await paste(client, app.id, { version: 1, text, mode: "replace", dry_run: true });
    expect(dry.status).toBe(200);
    expect(await dry.json()).toEqual({ added: ["NEW"], changed: ["CHANGE"], removed: ["DROP"], unchanged: ["KEEP"] });

    const unconfirmed = await paste(client, app.id, { version: 1, text, mode: "replace" });
    expect(unconfirmed.status).toBe(409);
    expect(await unconfirmed.json()).toMatchObject({ success: false, code: "CONFIRMATION_REQUIRED", removed: ["DROP"] });
    const wrongWord = await paste(client, app.id, { version: 1, text, mode: "replace", confirm: "replace" });
    expect(wrongWord.status).toBe(409);
    expect((await appRow(app.id)).envVersion).toBe(1);

    const merged = await paste(client, app.id, { version: 1, text, dry_run: true });
    expect(await merged.json()).toEqual({ added: ["NEW"], changed: ["CHANGE"], removed: [], unchanged: ["DROP", "KEEP"] });

    const replaced = await paste(client, app.id, { version: 1, text, mode: "replace", confirm: "REPLACE" });
    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toEqual({
      version: 2,
      variables: [{ key: "KEEP", value: "k" }, { key: "CHANGE", value: "new" }, { key: "NEW", value: "abc#def" }],
      effect: "stored",
    });
  });

  it("paste: rows are numbered by line, an unreadable line is reported by number, and nothing is saved", async () => {
    const { client, app } = await newApp();
    const bad = await paste(client, app.id, { version: 0, text: "# c\nGOOD=1\nPATH=/bin\nlower=x\n" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: "INVALID_ENV",
      errors: [
        { row: 3, key: "PATH", messages: ["PATH is reserved by the platform."] },
        { row: 4, key: "lower", messages: ["Use uppercase letters, digits, and underscores for the key."] },
      ],
    });
    const unreadable = await paste(client, app.id, { version: 0, text: "A=1\nnot a variable\n" });
    expect(unreadable.status).toBe(400);
    expect(await unreadable.json()).toMatchObject({ code: "INVALID_ENV", errors: [{ row: 2, key: "", messages: [expect.stringMatching(/^Line 2 /)] }] });
    expect((await appRow(app.id)).envVersion).toBe(0);
  });

  it("another account's app answers 404 like a missing one; a wrong method is 405; a bad body is 400", async () => {
    const { app } = await newApp();
    const stranger = await signedUpClient();
    for (const res of [
      await stranger.call("GET", envPath(app.id)),
      await put(stranger, app.id, { version: 0, variables: [] }),
      await paste(stranger, app.id, { version: 0, text: "A=1" }),
      await stranger.call("GET", envPath(crypto.randomUUID())),
    ]) {
      expect(res.status).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe("NOT_FOUND");
    }
    const { client: owner, app: own } = await newApp();
    expect((await owner.call("DELETE", envPath(own.id))).status).toBe(405);
    const wrong = await put(owner, own.id, { variables: [] });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { code: string }).code).toBe("INVALID_REQUEST");
    expect((await new ConsoleClient().call("GET", envPath(own.id))).status).toBe(401);
  });

  it("refuses a save while a deploy is in flight with 409 DEPLOY_IN_PROGRESS and writes nothing", async () => {
    const { client, app } = await newApp(cgiFiles({ buildSeconds: 3 }));
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    const res = await put(client, app.id, { version: 0, variables: [{ key: "GREETING", value: "hi" }] });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ success: false, code: "DEPLOY_IN_PROGRESS", error: "A deployment is in progress. Try again in a moment." });
    expect((await appRow(app.id)).envVersion).toBe(0);
    await waitForDeploy(client, app.id);
  }, 30_000);

  it("while a variable set is being applied, another save is refused (DEPLOY_IN_PROGRESS) and so are the controls", async () => {
    const { client, app } = await newApp();
    const stub = appController(env, app.id);
    await runInDurableObject(stub, (_instance, state) => state.storage.kv.put("in_flight", { kind: "env", appId: app.id, since: Date.now() }));
    const res = await put(client, app.id, { version: 0, variables: [{ key: "A", value: "1" }] });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ success: false, code: "DEPLOY_IN_PROGRESS", error: "A deployment is in progress. Try again in a moment." });
    const plan = await client.call("POST", `/console/api/apps/${app.id}/plan`, { plan: "pro" });
    expect(((await plan.json()) as { code: string }).code).toBe("CHANGE_IN_FLIGHT");
    expect((await appRow(app.id)).envVersion).toBe(0);
    await runInDurableObject(stub, (_instance, state) => state.storage.kv.delete("in_flight"));
  });

  it("after the first deploy a save starts a new instance from the same image that takes over; the old one is removed", async () => {
    const { client, app } = await newApp();
    await put(client, app.id, { version: 0, variables: [{ key: "GREETING", value: "first" }] });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    const live = (await waitForDeploy(client, app.id)) as AppEnvJson;
    expect(live.env).toMatchObject({ version: 1, applied_version: 1, applying: false });
    const served = () => workerExports.default.fetch(new Request(`http://${app.subdomain}.localhost/cgi-bin/env`)).then((r) => r.text());
    expect(await served()).toBe("GREETING=first\n");
    const before = await appRow(app.id);

    const res = await put(client, app.id, { version: 1, variables: [{ key: "GREETING", value: "second" }] });
    expect(await res.json()).toMatchObject({ version: 2, effect: "applying" });

    const applied = await waitForEnv(client, app.id);
    const after = await appRow(app.id);
    expect(applied.env.failure).toBeNull();
    expect(after.envAppliedVersion).toBe(after.envVersion);
    expect(after.image).toBe(before.image);
    expect(after.instanceId).not.toBe(before.instanceId);
    expect(after.envVersion).toBe(2);
    // The proxy may use the route it remembered for up to ROUTE_TTL_MS (the old instance still
    // serves then, while it drains); after that every request reaches the new instance.
    await new Promise((r) => setTimeout(r, ROUTE_TTL_MS));
    expect(await served()).toBe("GREETING=second\n");
    // The old instance is removed once it has drained.
    const deadline = Date.now() + 10_000;
    const runtime = new DockerRuntime({ url: (env as unknown as { RUNTIME_URL: string }).RUNTIME_URL });
    while ((await runtime.inspect(before.instanceId!)) !== null) {
      if (Date.now() > deadline) throw new Error("old instance still there");
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 30_000);
});
