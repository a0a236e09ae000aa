/**
 * Alerts end to end (docs/alerts.md) on a real `wrangler dev` and the machine's dockerd: a failed
 * deploy and a crash of a busybox app each deliver exactly one signed webhook to a stand-in
 * receiver (test/fakes/fake-receiver.ts, which checks X-Signature-256 with the channel's secret),
 * and a delivery the receiver answers 500 is retried through the queue after its backoff and then
 * accepted.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepository } from "../../scripts/dev-forge";
import { startFakeReceiver } from "../fakes/fake-receiver";
import { type AppJson, type AppsStack, BUSYBOX, deployAndWait, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

interface Received {
  json: { event: string; app: { id: string } | null; details: Record<string, unknown> };
  verified: boolean | null;
  answered: number;
}
interface Delivery {
  event: string;
  channel_id: string;
  status: string;
  status_code: number | null;
  attempts: number;
}

let stack: AppsStack;
let receiver: Awaited<ReturnType<typeof startFakeReceiver>>;
let session: ConsoleSession;

beforeAll(async () => {
  // Health checks every 2 s: the first one starts the instance's 15-second samples, which see the crash.
  [stack, receiver] = await Promise.all([startAppsStack({ HEALTH_CHECK_INTERVAL_SECONDS: "2" }), startFakeReceiver()]);
  session = await signedUp(stack.worker.url);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

const received = async (inbox: string) => ((await (await fetch(`${receiver.url}/__control/${inbox}`)).json()) as { received: Received[] }).received;
const settings = (inbox: string, value: { secret: string; fail?: number }) => fetch(`${receiver.url}/__control/${inbox}`, { method: "PUT", body: JSON.stringify(value) });

async function until<T>(what: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await what();
    if (done(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function channel(inbox: string, events: string[], fail = 0): Promise<string> {
  const made = await session.call<{ id: string; secret: string }>("POST", "/console/api/notifications/channels", { kind: "webhook", url: `${receiver.url}/hooks/${inbox}`, events });
  await settings(inbox, { secret: made.secret, fail });
  return made.id;
}

/** A busybox app whose CGI `/cgi-bin/crash` makes its main process exit 3 (the engine restarts it, once). */
function crashingApp(): Record<string, string | Uint8Array> {
  const main = "/bin/busybox httpd -p 8080 -h /www; while [ ! -f /www/crash-now ]; do /bin/busybox sleep 0.2; done; /bin/busybox rm -f /www/crash-now; exit 3";
  return {
    Dockerfile: `FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "sh", "-c", ${JSON.stringify(main)}]\n`,
    busybox: BUSYBOX,
    "www/index.html": "up\n",
    "www/cgi-bin/crash": ["#!/bin/busybox sh", "printf 'Content-Type: text/plain\\r\\n\\r\\n'", "echo crashing", "/bin/busybox touch /www/crash-now", ""].join("\n"),
  };
}

describe("alerts on dockerd", () => {
  it("a failed deploy and a crash each deliver one signed webhook; a delivery answered 500 is retried and then accepted", async () => {
    const inbox = `alerts-${Date.now()}`;
    const rejecting = `${inbox}-rejects-once`;
    const mainChannel = await channel(inbox, ["deploy.failed", "app.crashed"]);
    const rejectingChannel = await channel(rejecting, ["deploy.failed"], 1);

    // A deploy that fails: the repository holds no build file.
    const brokenRepo = await createRepository(stack.forgeRoot, "acme", `broken${Date.now() % 100000}`, { "README.md": "nothing to build\n" }, { forgeUrl: stack.forgeUrl });
    const broken = await session.call<AppJson>("POST", "/console/api/apps", { name: "Broken", repository: brokenRepo, subdomain: `broken${Date.now() % 100000}` });
    expect((await deployAndWait(session, broken.id)).latest_deploy).toMatchObject({ status: "failed" });

    // An app that crashes on request.
    const name = `crashy${Date.now() % 100000}`;
    const repo = await createRepository(stack.forgeRoot, "acme", name, crashingApp(), { modes: { busybox: 0o755, "www/cgi-bin/crash": 0o755 }, forgeUrl: stack.forgeUrl });
    const app = await session.call<AppJson>("POST", "/console/api/apps", { name, repository: repo, subdomain: name });
    expect((await deployAndWait(session, app.id)).latest_deploy).toMatchObject({ status: "live" });
    // Let the health check start the samples and the first sample see the instance running.
    await new Promise((r) => setTimeout(r, 5_000));
    const { stdout } = await promisify(execFile)("curl", ["-sS", `http://${name}.localhost:${stack.worker.port}/cgi-bin/crash`]);
    expect(stdout).toBe("crashing\n");

    const got = await until(() => received(inbox), (r) => r.length >= 2, 60_000);
    // Nothing more arrives for the same incidents (later samples, health checks).
    await new Promise((r) => setTimeout(r, 16_000));
    const all = await received(inbox);
    expect(all.map((r) => r.json.event).sort()).toEqual(["app.crashed", "deploy.failed"]);
    expect(all.map((r) => [r.verified, r.answered])).toEqual([
      [true, 200],
      [true, 200],
    ]);
    expect(got.find((r) => r.json.event === "deploy.failed")!.json.app!.id).toBe(broken.id);
    expect(all.find((r) => r.json.event === "app.crashed")!.json).toMatchObject({ app: { id: app.id }, details: { message: expect.stringContaining("crashed") } });

    // The rejecting receiver got the failed deploy twice: answered 500, then (after the 10 s backoff) 200.
    const retried = await until(() => received(rejecting), (r) => r.length >= 2, 40_000);
    expect(retried.map((r) => [r.json.event, r.verified, r.answered])).toEqual([
      ["deploy.failed", true, 500],
      ["deploy.failed", true, 200],
    ]);
    const { deliveries } = await session.call<{ deliveries: Delivery[] }>("GET", "/console/api/notifications/deliveries?limit=10");
    expect(deliveries.filter((d) => d.channel_id === rejectingChannel)).toMatchObject([{ event: "deploy.failed", status: "delivered", status_code: 200, attempts: 2 }]);
    expect(deliveries.filter((d) => d.channel_id === mainChannel).map((d) => [d.event, d.status, d.attempts]).sort()).toEqual([
      ["app.crashed", "delivered", 1],
      ["deploy.failed", "delivered", 1],
    ]);
  }, 180_000);
});
