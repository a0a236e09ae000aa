import { exports as workerExports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Cookies stay with their app (docs/security.md): an app that sets a cookie for the apps
// domain (`localhost` in these tests), which every other app would receive, gets it back
// host-only; a cookie for its own hostname, or with no Domain, passes as the app sent it.

const cgi = (...lines: string[]) => ["#!/bin/busybox sh", ...lines, ""].join("\n");

let app: AppJson;

beforeAll(async () => {
  const client = await signedUpClient();
  const repository = await publishRepository(`proxy-cookies-${Date.now() % 100000}`, {
    ...httpdFiles("<p>cookies</p>"),
    "www/cgi-bin/cookies": cgi(
      "printf 'Content-Type: text/plain\\r\\n'",
      "printf 'Set-Cookie: toss=1; Path=/; Domain=localhost; HttpOnly\\r\\n'",
      "printf 'Set-Cookie: toss2=1; domain=.LOCALHOST\\r\\n'",
      'printf "Set-Cookie: own=1; Domain=${HTTP_X_FORWARDED_HOST}\\r\\n"',
      "printf 'Set-Cookie: plain=1; Path=/\\r\\n'",
      "printf '\\r\\n'",
      "echo set",
    ),
  });
  const created = await client.json<AppJson>("POST", "/console/api/apps", { name: "Cookies", repository });
  await client.json("POST", `/console/api/apps/${created.id}/deploy`);
  app = await waitForDeploy(client, created.id);
  expect(app.status).toBe("running");
}, 30_000);

describe("cookies an app sets", () => {
  it("one for the apps domain comes back host-only; its own and plain ones unchanged", async () => {
    const res = await workerExports.default.fetch(new Request(`https://${app.subdomain}.localhost/cgi-bin/cookies`));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("set\n");
    const cookies = res.headers.getSetCookie();
    expect(cookies).toContain("toss=1; Path=/; HttpOnly");
    expect(cookies).toContain("toss2=1");
    expect(cookies).toContain("plain=1; Path=/");
    expect(cookies).toContain(`own=1; Domain=${app.subdomain}.localhost`);
    expect(cookies.filter((c) => /domain=\.?localhost\b/i.test(c))).toEqual([]);
    expect(cookies).toHaveLength(4);
  });
});
