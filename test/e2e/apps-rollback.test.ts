/**
 * Deploy history and rollback end to end: a real `wrangler dev`, the machine's dockerd and the
 * dev forge. Each deploy records the commit git made (SHA and message) and the engine's image id;
 * a rollback serves the earlier version again without building anything: the engine's own event
 * stream and image list show no build during it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFiles } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, curlApp, deployAndWait, httpdApp, repository, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

let stack: AppsStack;
let session: ConsoleSession;

beforeAll(async () => {
  stack = await startAppsStack();
  session = await signedUp(stack.worker.url);
});

afterAll(async () => {
  await stack?.stop();
});

interface DeployJson {
  id: string;
  status: string;
  kind: string;
  commit: { sha: string; message: string } | null;
  image_digest: string | null;
  rollback_of: string | null;
  rollback_available: boolean;
}

/** The image events the engine reported between two moments for images of one repository. */
async function imageEvents(repositoryName: string, since: string, until: string): Promise<{ Action: string; Actor: { ID: string; Attributes: Record<string, string> } }[]> {
  const filters = JSON.stringify({ type: ["image"] });
  const res = await fetch(`${stack.engineUrl}/events?since=${since}&until=${until}&filters=${encodeURIComponent(filters)}`);
  const lines = (await res.text()).split("\n").filter((line) => line.trim() !== "");
  return lines
    .map((line) => JSON.parse(line) as { Action: string; Actor: { ID: string; Attributes: Record<string, string> } })
    .filter((e) => `${e.Actor.ID} ${e.Actor.Attributes.name ?? ""}`.includes(repositoryName));
}

async function appImages(appId: string): Promise<{ Id: string; RepoTags: string[] }[]> {
  const filters = JSON.stringify({ reference: [`control-plane/app-${appId}`] });
  const images = (await (await fetch(`${stack.engineUrl}/images/json?filters=${encodeURIComponent(filters)}`)).json()) as { Id: string; RepoTags: string[] | null }[];
  return images.map((i) => ({ Id: i.Id, RepoTags: [...(i.RepoTags ?? [])].sort() })).sort((a, b) => a.Id.localeCompare(b.Id));
}

describe("deploy history and rollback on a real container engine", () => {
  it("records each deploy's commit and image id, and a rollback serves the old marker with no build on the engine", async () => {
    const name = `rollback-${Date.now() % 100000}`;
    const repo = await repository(stack, name, httpdApp("<h1>marker v1</h1>"));
    const firstSha = await commitFiles(stack.forgeRoot, "acme", name, {}, { message: "First marker\n\nServed by v1." });
    const app = await session.call<AppJson>("POST", "/console/api/apps", { name: "Rollback", repository: repo, subdomain: name });
    expect((await deployAndWait(session, app.id)).latest_deploy).toMatchObject({ status: "live" });
    expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "<h1>marker v1</h1>" });

    const secondSha = await commitFiles(stack.forgeRoot, "acme", name, { "www/index.html": "<h1>marker v2</h1>" }, { message: "Second marker" });
    expect((await deployAndWait(session, app.id)).latest_deploy).toMatchObject({ status: "live", kind: "deploy", commit: { sha: secondSha, message: "Second marker" } });
    expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "<h1>marker v2</h1>" });

    const { deploys } = await session.call<{ deploys: DeployJson[] }>("GET", `/console/api/apps/${app.id}/deploys`);
    const [v2, v1] = deploys;
    expect(v1).toMatchObject({ status: "superseded", kind: "deploy", commit: { sha: firstSha, message: "First marker\n\nServed by v1." }, rollback_available: true });
    expect(v2).toMatchObject({ status: "live", rollback_available: false });
    // The digest is the engine's own id of the image the deploy built.
    const inspected = (await (await fetch(`${stack.engineUrl}/images/${encodeURIComponent(`control-plane/app-${app.id}:${v1!.id}`)}/json`)).json()) as { Id: string };
    expect(v1!.image_digest).toBe(inspected.Id);
    // The previous image is kept for rollback (it used to be removed on every switch).
    const before = await appImages(app.id);
    expect(before.flatMap((i) => i.RepoTags).sort()).toEqual([`control-plane/app-${app.id}:${v1!.id}`, `control-plane/app-${app.id}:${v2!.id}`].sort());

    // The engine's clock is this machine's: events from this moment on (seconds with a fraction, as its API takes them).
    await new Promise((r) => setTimeout(r, 1000));
    const since = (Date.now() / 1000).toFixed(3);
    const { deploy } = await session.call<{ deploy: DeployJson }>("POST", `/console/api/apps/${app.id}/deploys/${v1!.id}/rollback`);
    expect(deploy).toMatchObject({ kind: "rollback", rollback_of: v1!.id, commit: { sha: firstSha }, image_digest: v1!.image_digest });
    for (let i = 0; i < 240; i++) {
      const now = await session.call<AppJson>("GET", `/console/api/apps/${app.id}`);
      if (!now.deploy_in_progress) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const after = await session.call<AppJson & { latest_deploy: DeployJson }>("GET", `/console/api/apps/${app.id}`);
    expect(after.latest_deploy).toMatchObject({ id: deploy.id, kind: "rollback", status: "live" });
    expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "<h1>marker v1</h1>" });
    const until = (Date.now() / 1000 + 1).toFixed(3);

    // No build reached the engine: no image of the app was made or tagged, and it holds the same images.
    expect(await imageEvents(`control-plane/app-${app.id}`, since, until)).toEqual([]);
    expect(await appImages(app.id)).toEqual(before);
    const log = await session.page(`/console/api/apps/${app.id}/deploys/${deploy.id}/log`);
    expect(log).toContain("no rebuild");
    expect(log).not.toContain("Step 1/");

    // Delete removes every kept image of the app.
    await session.call("DELETE", `/console/api/apps/${app.id}`);
    expect(await appImages(app.id)).toEqual([]);
  }, 240_000);
});
