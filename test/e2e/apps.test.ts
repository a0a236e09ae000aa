/**
 * Apps end to end (issue 12, "Must show"): a real `wrangler dev`, the machine's real dockerd and a
 * dev forge serving local git repositories. Every app is built from its branch, run as a real
 * container and reached through the Worker with curl at `<subdomain>.localhost`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFiles } from "../../scripts/dev-forge";
import {
  type AppJson,
  type AppsStack,
  curlApp,
  deployAndWait,
  engineHas,
  httpdApp,
  repository,
  signedUp,
  startAppsStack,
} from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

let stack: AppsStack;
let session: ConsoleSession;

beforeAll(async () => {
  stack = await startAppsStack();
  session = await signedUp(stack.worker.url);
});

afterAll(async () => {
  // Apps left by a failing test: stopping the stack removes their containers, networks and images.
  await stack?.stop();
});

const createApp = (body: Record<string, unknown>) => session.call<AppJson>("POST", "/console/api/apps", body);

describe("apps on a real container engine", () => {
  let app: AppJson;

  it("deploys a repository's branch and serves it at <subdomain>.localhost through the Worker", async () => {
    const repo = await repository(stack, "hello", httpdApp("<h1>hello v1</h1>", { port: 3000 }));
    app = await createApp({ name: "Hello", repository: repo, subdomain: `hello-${Date.now() % 100000}` });
    expect(app.status).toBe("not_deployed");
    expect(await curlApp(stack, app.subdomain)).toMatchObject({ status: 503 });

    const live = await deployAndWait(session, app.id);
    expect(live.latest_deploy).toMatchObject({ status: "live" });
    expect(live).toMatchObject({ status: "running", port: 3000, port_source: "expose", port_reason: "first EXPOSE line, 3000" });
    expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "<h1>hello v1</h1>" });

    const log = await (await fetch(`${stack.worker.url}/console/api/apps/${app.id}/deploys/${live.latest_deploy!.id}/log`, { headers: { Cookie: (session as any).cookie } })).text();
    expect(log).toContain("==> Fetching branch main");
    expect(log).toContain("Step 1/");
    expect(log).toContain("answered HTTP");
  });

  it("keeps the old version serving when a redeploy's build breaks", async () => {
    const repo = `${stack.forgeUrl}/acme/hello`;
    await commitFiles(stack.forgeRoot, "acme", "hello", { Dockerfile: 'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "false"]\n' });
    const after = await deployAndWait(session, app.id);
    expect(after.latest_deploy).toMatchObject({ status: "failed", failure: { kind: "build_failed" } });
    expect(after.latest_deploy!.failure!.message).toMatch(/The build failed at Step 3\/3 : RUN/);
    expect(after.status).toBe("running");
    expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "<h1>hello v1</h1>" });
    expect(repo).toContain("/acme/hello");
  });

  it("Stop makes the hostname answer 503 and Start brings it back", async () => {
    const stopped = await session.call<AppJson>("POST", `/console/api/apps/${app.id}/stop`);
    expect(stopped.status).toBe("stopped");
    expect(await curlApp(stack, app.subdomain)).toMatchObject({ status: 503 });
    const started = await session.call<AppJson>("POST", `/console/api/apps/${app.id}/start`);
    expect(started.status).toBe("running");
    expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "<h1>hello v1</h1>" });
  });

  it("Restart keeps the image and the app answers again", async () => {
    const before = await session.call<{ deploys: { id: string; status: string }[] }>("GET", `/console/api/apps/${app.id}/deploys`);
    const restarted = await session.call<AppJson>("POST", `/console/api/apps/${app.id}/restart`);
    expect(restarted.status).toBe("running");
    const after = await session.call<{ deploys: { id: string; status: string }[] }>("GET", `/console/api/apps/${app.id}/deploys`);
    expect(after.deploys).toEqual(before.deploys);
    expect(await curlApp(stack, app.subdomain)).toEqual({ status: 200, body: "<h1>hello v1</h1>" });
  });

  it("Delete removes the container and the image, and the hostname answers 404", async () => {
    const images = new Set<string>();
    const containers = await fetch(`${stack.engineUrl}/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ label: [`control-plane.app_id=${app.id}`] }))}`).then((r) => r.json() as Promise<{ Id: string; Image: string }[]>);
    expect(containers.length).toBeGreaterThan(0);
    for (const c of containers) images.add(c.Image);
    await session.call("DELETE", `/console/api/apps/${app.id}`);
    for (const c of containers) expect(await engineHas(stack, "containers", c.Id)).toBe(false);
    for (const image of images) expect(await engineHas(stack, "images", image)).toBe(false);
    expect(await curlApp(stack, app.subdomain)).toMatchObject({ status: 404 });
  });

  it("builds from a Dockerfile in a sub-directory given as the root directory", async () => {
    const files = Object.fromEntries(Object.entries(httpdApp("<p>from services/web</p>")).map(([k, v]) => [`services/web/${k}`, v]));
    const repo = await repository(stack, "mono", { ...files, "README.md": "monorepo\n" });
    const created = await createApp({ name: "Mono", repository: repo, root_directory: "services/web" });
    expect(created.subdomain).toMatch(/^app-[0-9a-f]{12}$/);
    const live = await deployAndWait(session, created.id);
    expect(live.latest_deploy, JSON.stringify(live.latest_deploy)).toMatchObject({ status: "live" });
    expect(await curlApp(stack, created.subdomain)).toEqual({ status: 200, body: "<p>from services/web</p>" });
  });

  it("fails a deploy with no build file at the resolved path, listing the build files found", async () => {
    const files = httpdApp("x");
    const repo = await repository(stack, "misplaced", { "docker/web.Dockerfile": files.Dockerfile!, "ops/Containerfile": "FROM scratch\n", busybox: files.busybox!, "www/index.html": "x" });
    const created = await createApp({ name: "Misplaced", repository: repo });
    const failed = await deployAndWait(session, created.id);
    expect(failed.status).toBe("failed");
    expect(failed.latest_deploy).toMatchObject({ status: "failed", failure: { kind: "build_file_missing" } });
    expect(failed.latest_deploy!.failure!.message).toContain('"Dockerfile"');
    expect(failed.latest_deploy!.failure!.message).toContain("docker/web.Dockerfile");
    expect(failed.latest_deploy!.failure!.message).toContain("ops/Containerfile");
  });

  it.each([
    ["listens on 127.0.0.1 only", httpdApp("x", { port: 8080, bind: "127.0.0.1" }), 8080],
    ["listens on another port than the EXPOSE line", httpdApp("x", { port: 8080, expose: "3000" }), 3000],
  ])("fails a deploy whose app %s, with the port message", async (_name, files, port) => {
    const repo = await repository(stack, `port-${port}-${Date.now() % 10000}`, files);
    const created = await createApp({ name: "Ports", repository: repo });
    const failed = await deployAndWait(session, created.id);
    expect(failed.latest_deploy).toMatchObject({ status: "failed", failure: { kind: "probe_failed" } });
    expect(failed.latest_deploy!.failure!.message).toContain(`The container started but nothing answered on port ${port}`);
    const left = await fetch(`${stack.engineUrl}/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ label: [`control-plane.app_id=${created.id}`] }))}`).then((r) => r.json() as Promise<unknown[]>);
    expect(left).toEqual([]);
  });
});
