/**
 * Environment variables end to end (issue 14, "Must show"): a real `wrangler dev`, the machine's
 * dockerd and the dev forge. The app is busybox httpd whose CGI page prints a variable, so what
 * the serving container was started with is read through the Worker with curl.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepository } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, BUSYBOX, curlApp, deployAndWait, engineHas, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

let stack: AppsStack;
let session: ConsoleSession;

interface EnvApp extends AppJson {
  env: { version: number; applied_version: number; applying: boolean; failure: { message: string; log: string } | null };
}

/** Values that must never reach wrangler's output. */
const SECRETS = ["greeting-value-one-7d1c", "greeting-value-two-9a4e"];

beforeAll(async () => {
  stack = await startAppsStack();
  session = await signedUp(stack.worker.url);
});

afterAll(async () => {
  await stack?.stop();
});

/** busybox httpd on 8080, bound to $BIND (0.0.0.0 when unset), with a CGI page printing GREETING. */
async function cgiRepository(name: string): Promise<string> {
  const files = {
    Dockerfile:
      "FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\n" +
      'CMD ["/bin/busybox", "sh", "-c", "exec /bin/busybox httpd -f -p ${BIND:-0.0.0.0}:8080 -h /www"]\n',
    busybox: BUSYBOX,
    "www/index.html": "<p>home</p>",
    "www/cgi-bin/env": '#!/bin/busybox sh\necho "Content-Type: text/plain"\necho ""\nprintf "GREETING=%s" "$GREETING"\n',
  };
  return createRepository(stack.forgeRoot, "acme", name, files, { modes: { busybox: 0o755, "www/cgi-bin/env": 0o755 }, forgeUrl: stack.forgeUrl });
}

/** The app's containers on the engine, by the label every instance carries. */
async function containersOf(appId: string): Promise<string[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`control-plane.app_id=${appId}`] }));
  const res = await fetch(`${stack.engineUrl}/containers/json?all=1&filters=${filters}`);
  return ((await res.json()) as { Id: string }[]).map((c) => c.Id);
}

async function waitForEnv(appId: string, timeoutMs = 90_000): Promise<EnvApp> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const app = await session.call<EnvApp>("GET", `/console/api/apps/${appId}`);
    if (!app.env.applying) return app;
    if (Date.now() > deadline) throw new Error(`variables of ${appId} still being applied after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

const put = (appId: string, version: number, variables: { key: string; value: string }[]) =>
  session.call<{ version: number; effect: string }>("PUT", `/console/api/apps/${appId}/env`, { version, variables });

describe("environment variables on a real container engine", () => {
  let app: EnvApp;
  let firstContainer: string;

  it("a save before the first deploy only stores the variables: no container starts", async () => {
    const repo = await cgiRepository(`env-${Date.now() % 100000}`);
    app = await session.call<EnvApp>("POST", "/console/api/apps", { name: "Env", repository: repo, subdomain: `env-${Date.now() % 100000}` });
    expect(await put(app.id, 0, [{ key: "GREETING", value: SECRETS[0]! }])).toMatchObject({ version: 1, effect: "stored" });
    expect(await containersOf(app.id)).toEqual([]);
    const after = await session.call<EnvApp>("GET", `/console/api/apps/${app.id}`);
    expect(after).toMatchObject({ status: "not_deployed", env: { version: 1, applied_version: 0, applying: false } });
  });

  it("the first deploy starts the app with the saved variables", async () => {
    const live = (await deployAndWait(session, app.id)) as EnvApp;
    expect(live.latest_deploy).toMatchObject({ status: "live" });
    expect(live.env).toMatchObject({ version: 1, applied_version: 1 });
    expect(await curlApp(stack, app.subdomain, "/cgi-bin/env")).toEqual({ status: 200, body: `GREETING=${SECRETS[0]}` });
    const containers = await containersOf(app.id);
    expect(containers).toHaveLength(1);
    firstContainer = containers[0]!;
  });

  it("a save switches to a new container with the new value; no request fails during the switch; the old container is removed", async () => {
    const seen = new Set<string>();
    const failures: string[] = [];
    let looping = true;
    const loop = (async () => {
      while (looping) {
        const res = await curlApp(stack, app.subdomain, "/cgi-bin/env").catch((err: Error) => ({ status: 0, body: err.message }));
        if (res.status !== 200 || !/^GREETING=greeting-value-(one-7d1c|two-9a4e)$/.test(res.body)) failures.push(`${res.status} ${res.body}`);
        else seen.add(res.body);
      }
    })();
    try {
      // The loop is running (it has been answered with the old value) before the save.
      while (seen.size === 0 && failures.length === 0) await new Promise((r) => setTimeout(r, 50));
      expect(await put(app.id, 1, [{ key: "GREETING", value: SECRETS[1]! }])).toMatchObject({ version: 2, effect: "applying" });
      const applied = await waitForEnv(app.id);
      expect(applied.env).toEqual({ version: 2, applied_version: 2, applying: false, failure: null });
      // Requests keep flowing for a while after the switch, across the old container's removal.
      const deadline = Date.now() + 30_000;
      while ((await engineHas(stack, "containers", firstContainer)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 300));
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      looping = false;
      await loop;
    }
    expect(failures).toEqual([]);
    expect([...seen].sort()).toEqual([`GREETING=${SECRETS[0]}`, `GREETING=${SECRETS[1]}`]);
    expect(await curlApp(stack, app.subdomain, "/cgi-bin/env")).toEqual({ status: 200, body: `GREETING=${SECRETS[1]}` });
    expect(await engineHas(stack, "containers", firstContainer)).toBe(false);
    const containers = await containersOf(app.id);
    expect(containers).toHaveLength(1);
    expect(containers[0]).not.toBe(firstContainer);
  });

  it("a save whose new container fails its check leaves the old one serving, and the page and JSON say so", async () => {
    const before = await containersOf(app.id);
    expect(await put(app.id, 2, [{ key: "GREETING", value: SECRETS[1]! }, { key: "BIND", value: "127.0.0.1" }])).toMatchObject({ version: 3, effect: "applying" });
    const failed = await waitForEnv(app.id);
    expect(failed.env).toMatchObject({ version: 3, applied_version: 2, applying: false });
    expect(failed.env.failure!.message).toMatch(/^The container started but nothing answered on port 8080/);
    expect(failed.env.failure!.log).toContain("probing port 8080");
    expect(await curlApp(stack, app.subdomain, "/cgi-bin/env")).toEqual({ status: 200, body: `GREETING=${SECRETS[1]}` });
    expect(await containersOf(app.id)).toEqual(before);

    const page = await fetch(`${stack.worker.url}/console/apps/${app.id}`, { headers: { Cookie: (session as unknown as { cookie: string }).cookie } });
    const html = await page.text();
    expect(html).toContain("The running instance still has the previous set of variables");
    expect(html).toContain("Log of the failed check");
    // The saved set is the new one.
    const saved = await session.call<{ version: number; variables: { key: string }[] }>("GET", `/console/api/apps/${app.id}/env`);
    expect(saved.variables.map((v) => v.key)).toEqual(["GREETING", "BIND"]);
  });

  it("no value ever appears in the wrangler dev output", () => {
    const output = stack.worker.output();
    expect(output).toContain("environment variables saved");
    for (const secret of SECRETS) expect(output).not.toContain(secret);
  });
});
