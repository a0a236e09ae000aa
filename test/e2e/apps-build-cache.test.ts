/**
 * Build cache through the whole stack (a real `wrangler dev`, real dockerd, the dev forge): an
 * app's redeploy after a one-file commit takes its slow step from the app's own cache, while
 * another account deploying the very same repository runs that step itself; its deploy log never
 * shows the first tenant's layer reused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFiles } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, BUSYBOX, curlApp, deployAndWait, repository, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

let stack: AppsStack;
let alice: ConsoleSession;
let bob: ConsoleSession;

beforeAll(async () => {
  stack = await startAppsStack({ DRAIN_SECONDS: "2", STOP_GRACE_SECONDS: "1" });
  alice = await signedUp(stack.worker.url);
  bob = await signedUp(stack.worker.url);
});

afterAll(async () => {
  for (const session of [alice, bob]) {
    if (!session) continue;
    const { apps } = await session.call<{ apps: AppJson[] }>("GET", "/console/api/apps").catch(() => ({ apps: [] as AppJson[] }));
    for (const app of apps) await session.call("DELETE", `/console/api/apps/${app.id}`).catch(() => undefined);
  }
  await stack?.stop();
});

/** A step standing for a dependency install: its output line shows each time it really runs. */
const SLOW = `RUN ["/bin/busybox", "sh", "-c", "/bin/busybox head -c 32 /dev/urandom > /deps.bin; echo installing dependencies now"]`;
const files = (page: string) => ({
  Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\n${SLOW}\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "httpd", "-f", "-p", "0.0.0.0:8080", "-h", "/www"]\n`,
  busybox: BUSYBOX,
  "www/index.html": page,
});

async function deployLog(session: ConsoleSession, app: AppJson): Promise<string> {
  return session.page(`/console/api/apps/${app.id}/deploys/${app.latest_deploy!.id}/log`);
}

/** The step's own output line (bare from the classic builder, `#N ...` from BuildKit) shows it ran. */
function slowStepRan(log: string): boolean {
  return /^(#\d+ )?installing dependencies now$/m.test(log);
}

describe("build cache per app", () => {
  it("a redeploy reuses the app's own layers; another account's identical repository does not", async () => {
    const repo = await repository(stack, "cached", files("v1\n"));
    const a = await alice.call<AppJson>("POST", "/console/api/apps", { name: "Cached", repository: repo, subdomain: `cached-a-${Date.now().toString(36)}`, plan: "lite" });
    const first = await deployAndWait(alice, a.id);
    expect(first.latest_deploy?.status).toBe("live");
    expect(slowStepRan(await deployLog(alice, first))).toBe(true);

    await commitFiles(stack.forgeRoot, "acme", "cached", { "www/index.html": "v2\n" });
    const second = await deployAndWait(alice, a.id);
    expect(second.latest_deploy?.status).toBe("live");
    const secondLog = await deployLog(alice, second);
    expect(slowStepRan(secondLog)).toBe(false);
    expect((await curlApp(stack, a.subdomain)).body).toBe("v2\n");

    // Bob: same repository, same commit, same Dockerfile; Alice's image is on the engine.
    const b = await bob.call<AppJson>("POST", "/console/api/apps", { name: "Copycat", repository: repo, subdomain: `cached-b-${Date.now().toString(36)}`, plan: "lite" });
    const other = await deployAndWait(bob, b.id);
    expect(other.latest_deploy?.status).toBe("live");
    expect(slowStepRan(await deployLog(bob, other))).toBe(true);
    expect((await curlApp(stack, b.subdomain)).body).toBe("v2\n");
  });
});
