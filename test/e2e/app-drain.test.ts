/**
 * Draining after a switch, end to end on a real `wrangler dev` and dockerd: a request that takes
 * 10 s, in flight on the old instance when a redeploy switches traffic, completes, because the old
 * instance keeps running for DRAIN_SECONDS before it gets SIGTERM and its grace period.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitFiles, createRepository } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, BUSYBOX, curlApp, deployAndWait, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

const DRAIN_SECONDS = 15;
/** The label every instance of an app carries (src/apps/launch.ts APP_ID_LABEL). */
const APP_ID_LABEL = "control-plane.app_id";
const MODES = { busybox: 0o755, "www/cgi-bin/slow": 0o755 };
const SLOW_SECONDS = 10;

let stack: AppsStack;
let session: ConsoleSession;

beforeAll(async () => {
  stack = await startAppsStack({ DRAIN_SECONDS: String(DRAIN_SECONDS), STOP_GRACE_SECONDS: "2" });
  session = await signedUp(stack.worker.url);
});

afterAll(async () => {
  await stack?.stop();
});

/** A busybox httpd app whose CGI answers its headers at once and ends its body SLOW_SECONDS later. */
function slowApp(version: string): Record<string, string | Uint8Array> {
  return {
    Dockerfile: 'FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]\n',
    busybox: BUSYBOX,
    "www/index.html": `${version}\n`,
    "www/cgi-bin/slow": ["#!/bin/busybox sh", "printf 'Content-Type: text/plain\\r\\n\\r\\n'", `echo "${version} started"`, `/bin/busybox sleep ${SLOW_SECONDS}`, `echo "${version} done"`, ""].join("\n"),
  };
}

describe("a switch drains the old instance", () => {
  it("a 10 s request in flight when a redeploy switches traffic completes on the old instance", async () => {
    const name = `drain${Date.now() % 100000}`;
    const repo = await createRepository(stack.forgeRoot, "acme", name, slowApp("v1"), { modes: MODES, forgeUrl: stack.forgeUrl });
    const app = await session.call<AppJson>("POST", "/console/api/apps", { name, repository: repo, subdomain: name });
    const first = await deployAndWait(session, app.id);
    expect(first.latest_deploy).toMatchObject({ status: "live" });

    // The slow request starts on v1 and is still running when v2 takes the traffic.
    const url = `http://${name}.localhost:${stack.worker.port}/cgi-bin/slow`;
    const slow = promisify(execFile)("curl", ["-sS", "-w", "\n%{http_code}", url]);
    await new Promise((r) => setTimeout(r, 1_000));
    await commitFiles(stack.forgeRoot, "acme", name, slowApp("v2"), { modes: MODES });
    await session.call("POST", `/console/api/apps/${app.id}/deploy`);
    const switchedBy = Date.now() + 120_000;
    while ((await curlApp(stack, name)).body !== "v2\n" && Date.now() < switchedBy) await new Promise((r) => setTimeout(r, 250));
    expect(await curlApp(stack, name)).toEqual({ status: 200, body: "v2\n" });

    const { stdout } = await slow;
    expect(stdout.split("\n")).toEqual(["v1 started", "v1 done", "", "200"]);

    // After the drain the old instance is gone from the engine: one container left for the app.
    const retiredBy = Date.now() + (DRAIN_SECONDS + 60) * 1000;
    let held: string[] = [];
    do {
      await new Promise((r) => setTimeout(r, 1_000));
      const { stdout: ids } = await promisify(execFile)("docker", ["ps", "-a", "-q", "--filter", `label=${APP_ID_LABEL}=${app.id}`]);
      held = ids.trim().split("\n").filter(Boolean);
    } while (held.length > 1 && Date.now() < retiredBy);
    expect(held).toHaveLength(1);
  }, 240_000);
});
