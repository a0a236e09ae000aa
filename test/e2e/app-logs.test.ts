/**
 * Live logs end to end: a real `wrangler dev`, the machine's real dockerd and a busybox app. An
 * SSE client (curl) receives a line the app prints within 2 s, the JSON search finds the app's
 * output with its env values masked, and a closed stream leaves no engine call behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppJson, type AppsStack, BUSYBOX, curlApp, deployAndWait, repository, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

let stack: AppsStack;
let session: ConsoleSession;
const SECRET = "e2e-secret-token-5521";

beforeAll(async () => {
  stack = await startAppsStack();
  session = await signedUp(stack.worker.url);
});

afterAll(async () => {
  await stack?.stop();
});

/** busybox httpd with `-vv`: it prints a line per request to stderr, naming the path. */
function loggingApp(): Record<string, string | Uint8Array> {
  return {
    Dockerfile:
      "FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\n" +
      'CMD ["/bin/busybox", "sh", "-c", "echo booting with $API_TOKEN; exec /bin/busybox httpd -f -vv -p 0.0.0.0:8080 -h /www"]\n',
    busybox: BUSYBOX,
    "www/index.html": "<p>logs</p>",
  };
}

/** curl -N on the stream, collecting its output as it comes. */
function sseClient(url: string, cookie: string): { proc: ChildProcess; output: () => string } {
  let text = "";
  const proc = spawn("curl", ["-sS", "-N", "-H", `Cookie: ${cookie}`, "-H", "Accept: text/event-stream", url]);
  proc.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  return { proc, output: () => text };
}

async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

describe("live logs on a real container engine", () => {
  it("an SSE client receives a line printed by a busybox app within 2 s; the search masks env values", async () => {
    const repo = await repository(stack, "logs", loggingApp());
    const app = await session.call<AppJson>("POST", "/console/api/apps", { name: "Logs", repository: repo, subdomain: `logs-${Date.now() % 100000}` });
    await session.call("PUT", `/console/api/apps/${app.id}/env`, { version: 0, variables: [{ key: "API_TOKEN", value: SECRET }] });
    const live = await deployAndWait(session, app.id);
    expect(live.latest_deploy?.status).toBe("live");

    const cookie = (session as unknown as { cookie: string }).cookie;
    const client = sseClient(`${stack.worker.url}/console/api/apps/${app.id}/logs/stream`, cookie);
    try {
      // The backlog arrives first (the boot line, masked): the stream is open.
      expect(await waitUntil(() => client.output().includes("booting with"), 10_000)).toBe(true);
      expect(client.output()).toContain("booting with ****");
      const marker = `marker-${Date.now()}`;
      const printedAt = Date.now();
      expect((await curlApp(stack, app.subdomain, `/${marker}`)).status).toBe(404);
      expect(await waitUntil(() => client.output().includes(marker), 2_000)).toBe(true);
      expect(Date.now() - printedAt).toBeLessThan(2_000);
      const event = client.output().split("\n\n").find((e) => e.includes(marker))!;
      expect(event).toMatch(/^id: \d+-\d+-\w+\ndata: \{/);
      expect(JSON.parse(event.split("\ndata: ")[1]!)).toMatchObject({ stream: "stderr" });
    } finally {
      client.proc.kill();
    }
    expect(client.output()).not.toContain(SECRET);

    const { lines } = await session.call<{ lines: { text: string }[] }>("GET", `/console/api/apps/${app.id}/logs?q=booting`);
    expect(lines.map((l) => l.text)).toEqual(["booting with ****"]);
  });
});
