import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports as workerExports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { database } from "../../src/db/client";
import { customDomains } from "../../src/db/schema";
import { defaultDeps } from "../../src/http/context";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { uniqueHost } from "./domain-helpers";

// Issue 20, "Proxy", through the Worker to an instance on the fake Docker Engine (a real HTTP
// server whose CGI scripts see every request header as HTTP_<NAME>, as busybox httpd's do):
// forwarding headers set by us, the client's own dropped, headers named in Connection removed; a
// 504 page when the instance sends no headers within PROXY_HEADER_TIMEOUT_SECONDS, and a body that
// pauses longer than that is not cut.

const SEEN = ["X_FORWARDED_FOR", "X_FORWARDED_PROTO", "X_FORWARDED_HOST", "FORWARDED", "X_REAL_IP", "X_DROP_ME", "X_KEPT", "CONNECTION", "KEEP_ALIVE"];
const cgi = (...lines: string[]) => ["#!/bin/busybox sh", ...lines, ""].join("\n");

let app: AppJson;

beforeAll(async () => {
  const client = await signedUpClient();
  const repository = await publishRepository(`proxy-headers-${Date.now() % 100000}`, {
    ...httpdFiles("<p>proxied</p>"),
    "www/cgi-bin/headers": cgi("printf 'Content-Type: text/plain\\r\\n\\r\\n'", ...SEEN.map((name) => `echo "${name}=\${HTTP_${name}-unset}"`)),
    "www/cgi-bin/hop-reply": cgi("printf 'Content-Type: text/plain\\r\\nConnection: X-Hop-Secret\\r\\nX-Hop-Secret: internal\\r\\nKeep-Alive: timeout=5\\r\\nX-App: kept\\r\\n\\r\\n'", "echo replied"),
    "www/cgi-bin/slow-headers": cgi("/bin/busybox sleep 3", "printf 'Content-Type: text/plain\\r\\n\\r\\n'", "echo late"),
    "www/cgi-bin/slow-body": cgi("printf 'Content-Type: text/plain\\r\\n\\r\\n'", "echo first", "/bin/busybox sleep 2", "echo second"),
  });
  const created = await client.json<AppJson>("POST", "/console/api/apps", { name: "Headers", repository });
  await client.json("POST", `/console/api/apps/${created.id}/deploy`);
  app = await waitForDeploy(client, created.id);
  expect(app.status).toBe("running");
}, 30_000);

function seen(body: string): Record<string, string> {
  return Object.fromEntries(body.trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
}

/** The Worker with PROXY_HEADER_TIMEOUT_SECONDS set to `seconds` (a fresh env, so a fresh config). */
async function withHeaderTimeout(seconds: number, request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await createApp(defaultDeps).fetch(request, { ...env, PROXY_HEADER_TIMEOUT_SECONDS: String(seconds) }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("headers the client receives", () => {
  it("the instance's hop-by-hop headers and those it named in Connection are dropped; its own are kept", async () => {
    const res = await workerExports.default.fetch(new Request(`https://${app.subdomain}.localhost/cgi-bin/hop-reply`));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("replied\n");
    expect(res.headers.get("x-app")).toBe("kept");
    expect(res.headers.get("x-hop-secret")).toBeNull();
    expect(res.headers.get("keep-alive")).toBeNull();
  });
});

describe("headers the instance receives", () => {
  it("X-Forwarded-For appended, the client's Forwarded and X-Real-IP dropped, ours set, Connection names removed", async () => {
    const res = await workerExports.default.fetch(
      new Request(`https://${app.subdomain}.localhost/cgi-bin/headers`, {
        headers: {
          "CF-Connecting-IP": "203.0.113.9",
          "X-Forwarded-For": "198.51.100.1",
          "X-Forwarded-Proto": "http",
          "X-Forwarded-Host": "bank.example",
          Forwarded: "for=10.0.0.1",
          "X-Real-IP": "10.0.0.1",
          Connection: "keep-alive, X-Drop-Me",
          "Keep-Alive": "timeout=5",
          "X-Drop-Me": "1",
          "X-Kept": "2",
        },
      }),
    );
    expect(res.status).toBe(200);
    const headers = seen(await res.text());
    expect(headers).toMatchObject({
      X_FORWARDED_FOR: "198.51.100.1, 203.0.113.9",
      X_FORWARDED_PROTO: "https",
      X_FORWARDED_HOST: `${app.subdomain}.localhost`,
      FORWARDED: "unset",
      X_REAL_IP: "unset",
      X_DROP_ME: "unset",
      X_KEPT: "2",
      KEEP_ALIVE: "unset",
    });
    // The runtime opens its own connection to the instance and may say `Connection: keep-alive`
    // on it; the client's value never arrives.
    expect(headers.CONNECTION).not.toContain("X-Drop-Me");
  });

  it("a client sending no X-Forwarded-For gets only its address", async () => {
    const res = await workerExports.default.fetch(new Request(`http://${app.subdomain}.localhost/cgi-bin/headers`, { headers: { "CF-Connecting-IP": "2001:db8::7" } }));
    expect(seen(await res.text())).toMatchObject({ X_FORWARDED_FOR: "2001:db8::7", X_FORWARDED_PROTO: "http" });
  });
});

describe("headers through a custom domain", () => {
  it("X-Forwarded-Host is the custom hostname the client asked for", async () => {
    const hostname = uniqueHost();
    await database(env).insert(customDomains).values({ id: crypto.randomUUID(), hostname, appId: app.id, status: "active", routeReady: true, createdAt: 0 });
    const res = await workerExports.default.fetch(
      new Request(`https://${hostname}/cgi-bin/headers`, { headers: { "CF-Connecting-IP": "203.0.113.10", "X-Forwarded-Host": "bank.example", Forwarded: "host=bank.example" } }),
    );
    expect(seen(await res.text())).toMatchObject({ X_FORWARDED_HOST: hostname, X_FORWARDED_PROTO: "https", X_FORWARDED_FOR: "203.0.113.10", FORWARDED: "unset" });
  });
});

describe("the header timeout", () => {
  it("answers the 504 page when the instance sends no headers in time, and the next request is served", async () => {
    const started = Date.now();
    const res = await withHeaderTimeout(1, new Request(`http://${app.subdomain}.localhost/cgi-bin/slow-headers`));
    expect(res.status).toBe(504);
    expect(res.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    const page = await res.text();
    expect(page).toContain("<title>App took too long</title>");
    expect(page).toContain("did not start answering within 1 seconds");
    expect(Date.now() - started).toBeLessThan(2900);
    const next = await withHeaderTimeout(1, new Request(`http://${app.subdomain}.localhost/`));
    expect([next.status, await next.text()]).toEqual([200, "<p>proxied</p>"]);
  });

  it("never cuts a body that pauses longer than the timeout once the headers are in", async () => {
    const res = await withHeaderTimeout(1, new Request(`http://${app.subdomain}.localhost/cgi-bin/slow-body`));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("first\nsecond\n");
  });
});
