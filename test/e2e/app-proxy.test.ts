/**
 * The app proxy end to end (issue 20, "Proxy"): a real `wrangler dev`, the machine's real dockerd
 * and apps built FROM scratch around Debian's static busybox, reached at `<subdomain>.localhost`.
 * - A WebSocket echo server (busybox `nc` running a shell script that speaks RFC 6455) answers a
 *   real WebSocket client (undici's, the one Node's global WebSocket is made of) through the
 *   Worker: the 101 is relayed and messages flow both ways.
 * - A busybox httpd CGI app shows the headers the instance receives, and one that is slow to send
 *   its headers gets the 504 page after PROXY_HEADER_TIMEOUT_SECONDS, while one whose body pauses
 *   longer than that is not cut.
 */
import { execFile } from "node:child_process";
import { lookup as dnsLookup } from "node:dns";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { Agent, WebSocket } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepository } from "../../scripts/dev-forge";
import { type AppJson, type AppsStack, BUSYBOX, deployAndWait, signedUp, startAppsStack } from "./apps-harness";
import type { ConsoleSession } from "./export-helpers";

/**
 * The instance's header timeout for this file's Worker: short, so the 504 comes quickly, yet long
 * enough that a healthy app's first answer on a busy two-core CI machine (other files building
 * images meanwhile) never meets it (2 s did once).
 */
const HEADER_TIMEOUT_SECONDS = 5;

let stack: AppsStack;
let session: ConsoleSession;

beforeAll(async () => {
  stack = await startAppsStack({ PROXY_HEADER_TIMEOUT_SECONDS: String(HEADER_TIMEOUT_SECONDS) });
  session = await signedUp(stack.worker.url);
});

afterAll(async () => {
  await stack?.stop();
});

/** Creates and deploys an app from `files` (paths listed in `executables` get mode 0755). */
async function deployed(name: string, files: Record<string, string | Uint8Array>, executables: string[]): Promise<AppJson> {
  const modes = Object.fromEntries(["busybox", ...executables].map((path) => [path, 0o755]));
  const repo = await createRepository(stack.forgeRoot, "acme", name, { busybox: BUSYBOX, ...files }, { modes, forgeUrl: stack.forgeUrl });
  const app = await session.call<AppJson>("POST", "/console/api/apps", { name, repository: repo, subdomain: `${name}-${Date.now() % 100000}` });
  const live = await deployAndWait(session, app.id);
  expect(live.latest_deploy).toMatchObject({ status: "live" });
  return live;
}

/** curl to an app's hostname: status, body and how long the whole exchange took. */
async function curl(subdomain: string, path: string, headers: string[] = [], extra: string[] = []): Promise<{ status: number; body: string; seconds: number }> {
  const args = ["-sS", "-w", "\n%{http_code} %{time_total}", ...headers.flatMap((h) => ["-H", h]), ...extra, `http://${subdomain}.localhost:${stack.worker.port}${path}`];
  const { stdout } = await promisify(execFile)("curl", args);
  const cut = stdout.lastIndexOf("\n");
  const [status, seconds] = stdout.slice(cut + 1).split(" ");
  return { status: Number(status), body: stdout.slice(0, cut), seconds: Number(seconds) };
}

/** `*.localhost` is loopback (RFC 6761), as browsers and curl treat it; Node's resolver does not. */
const localhostAgent = new Agent({
  connect: {
    lookup: (hostname, options, callback) =>
      hostname.endsWith(".localhost") ? callback(null, [{ address: "127.0.0.1", family: 4 }]) : dnsLookup(hostname, options, callback),
  },
});

describe("WebSockets through <subdomain>.localhost", () => {
  it("relays the 101 and echoes text and binary messages both ways, then closes cleanly", async () => {
    const app = await deployed(
      "wsecho",
      {
        Dockerfile: 'FROM scratch\nCOPY busybox /bin/busybox\nCOPY ws-echo /ws-echo\nEXPOSE 8080\nCMD ["/bin/busybox", "nc", "-ll", "-p", "8080", "-e", "/ws-echo"]\n',
        "ws-echo": readFileSync(new URL("./fixtures/ws-echo.sh", import.meta.url)),
      },
      ["ws-echo"],
    );
    // A plain request reaches the same server (the deploy probe did too).
    expect(await curl(app.subdomain, "/")).toMatchObject({ status: 200, body: "ws-echo up\n" });

    const ws = new WebSocket(`ws://${app.subdomain}.localhost:${stack.worker.port}/chat`, { dispatcher: localhostAgent });
    ws.binaryType = "arraybuffer";
    const received: (string | number[])[] = [];
    const sent: (string | Uint8Array)[] = ["hello", "é€ ✓ unicode", "x".repeat(300), new Uint8Array([0, 1, 2, 127, 128, 255])];
    const closed = new Promise<{ code: number; reason: string }>((resolve, reject) => {
      ws.onopen = () => {
        for (const message of sent) ws.send(message);
      };
      ws.onmessage = (event) => {
        received.push(typeof event.data === "string" ? event.data : [...new Uint8Array(event.data as ArrayBuffer)]);
        if (received.length === sent.length) ws.close(1000, "done");
      };
      ws.onclose = (event) => resolve({ code: event.code, reason: event.reason });
      ws.onerror = (event) => reject(new Error(`WebSocket error: ${(event as unknown as { message?: string }).message ?? "unknown"}`));
    });
    expect(await closed).toEqual({ code: 1000, reason: "done" });
    expect(received).toEqual(["hello", "é€ ✓ unicode", "x".repeat(300), [0, 1, 2, 127, 128, 255]]);
  });
});

/** A CGI script: CRLF headers (busybox httpd passes them on as written), then the lines given. */
const cgi = (...lines: string[]) => ["#!/bin/busybox sh", ...lines, ""].join("\n");

describe("HTTP through the proxy", () => {
  let app: AppJson;

  beforeAll(async () => {
    app = await deployed(
      "proxied",
      {
        Dockerfile: 'FROM scratch\nCOPY busybox /bin/busybox\nCOPY www /www\nEXPOSE 8080\nCMD ["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]\n',
        "www/index.html": "proxied\n",
        // busybox httpd hands every request header to CGI as HTTP_<NAME>.
        "www/cgi-bin/headers": cgi(
          "printf 'Content-Type: text/plain\\r\\n\\r\\n'",
          ...["X_FORWARDED_FOR", "X_FORWARDED_PROTO", "X_FORWARDED_HOST", "FORWARDED", "X_REAL_IP", "X_FORWARDED_PORT", "KEEP_ALIVE", "TE", "X_KEPT"].map(
            (name) => `echo "${name}=\${HTTP_${name}-unset}"`,
          ),
        ),
        "www/cgi-bin/slow-headers": cgi(`/bin/busybox sleep ${HEADER_TIMEOUT_SECONDS * 3}`, "printf 'Content-Type: text/plain\\r\\n\\r\\n'", "echo late"),
        "www/cgi-bin/slow-body": cgi("printf 'Content-Type: text/plain\\r\\n\\r\\n'", "echo first", `/bin/busybox sleep ${HEADER_TIMEOUT_SECONDS * 2}`, "echo second"),
        // Reads the whole request body before it answers.
        "www/cgi-bin/upload": cgi('body=$(/bin/busybox head -c "$CONTENT_LENGTH")', "printf 'Content-Type: text/plain\\r\\n\\r\\n'", 'echo "got ${#body} bytes"'),
      },
      ["www/cgi-bin/headers", "www/cgi-bin/slow-headers", "www/cgi-bin/slow-body", "www/cgi-bin/upload"],
    );
  });

  it("sets the forwarding headers and drops the client's own and the hop-by-hop ones", async () => {
    const res = await curl(app.subdomain, "/cgi-bin/headers", [
      "X-Forwarded-For: 198.51.100.1",
      "X-Forwarded-Proto: https",
      "X-Forwarded-Host: bank.example",
      "Forwarded: for=203.0.113.66;proto=https",
      "X-Real-IP: 203.0.113.66",
      "X-Forwarded-Port: 443",
      "Keep-Alive: timeout=5",
      "TE: trailers",
      "X-Kept: 2",
    ]);
    expect(res.status).toBe(200);
    const seen = Object.fromEntries(res.body.trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
    // Under wrangler dev the address the Worker saw is the TCP peer, which miniflare puts in
    // CF-Connecting-IP: curl connected from 127.0.0.1. (The runtime consumes the client's own
    // Connection header before the Worker sees it, so removal of the headers it names is shown by
    // the Workers tests, test/integration/app-proxy-headers.test.ts.)
    expect(seen).toEqual({
      X_FORWARDED_FOR: "198.51.100.1, 127.0.0.1",
      X_FORWARDED_PROTO: "http",
      X_FORWARDED_HOST: `${app.subdomain}.localhost:${stack.worker.port}`,
      FORWARDED: "unset",
      X_REAL_IP: "unset",
      X_FORWARDED_PORT: "unset",
      KEEP_ALIVE: "unset",
      TE: "unset",
      X_KEPT: "2",
    });
  });

  it("answers the 504 page when the instance sends no headers within PROXY_HEADER_TIMEOUT_SECONDS", async () => {
    const res = await curl(app.subdomain, "/cgi-bin/slow-headers");
    expect(res.status).toBe(504);
    expect(res.body).toContain("<title>App took too long</title>");
    expect(res.body).toContain(`did not start answering within ${HEADER_TIMEOUT_SECONDS} seconds`);
    expect(res.seconds).toBeGreaterThanOrEqual(HEADER_TIMEOUT_SECONDS);
    expect(res.seconds).toBeLessThan(HEADER_TIMEOUT_SECONDS * 3);
    // The app itself is fine: other requests answer.
    expect(await curl(app.subdomain, "/")).toMatchObject({ status: 200, body: "proxied\n" });
  });

  it("counts the header timeout from the end of a slow upload, not from its start", async () => {
    // 1,500 bytes a second for twice the header timeout: the upload alone takes twice the header timeout.
    const bytes = 1500 * 2 * HEADER_TIMEOUT_SECONDS;
    const res = await curl(app.subdomain, "/cgi-bin/upload", ["Content-Type: text/plain"], ["--limit-rate", "1500", "--data-binary", "x".repeat(bytes)]);
    expect(res).toMatchObject({ status: 200, body: `got ${bytes} bytes\n` });
    expect(res.seconds).toBeGreaterThanOrEqual(HEADER_TIMEOUT_SECONDS * 1.5);
  });

  it("never cuts a body that pauses longer than the header timeout", async () => {
    const res = await curl(app.subdomain, "/cgi-bin/slow-body");
    expect(res).toMatchObject({ status: 200, body: "first\nsecond\n" });
    expect(res.seconds).toBeGreaterThanOrEqual(HEADER_TIMEOUT_SECONDS * 2);
  });
});
