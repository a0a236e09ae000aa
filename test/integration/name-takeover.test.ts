import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getDomain } from "../../src/domains/store";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import { setDns, uniqueHost } from "./domain-helpers";
import type { ConsoleClient } from "./helpers";

// No takeover through a freed name, tried as a stranger would: account A's app had subdomain S and
// the custom domain H (a CNAME to S, Active); A deletes the app and forgets the CNAME. Within
// SUBDOMAIN_HOLD_DAYS (30) another account cannot create an app with S, A itself can; after, a
// stranger can, but its claim of H with only A's old CNAME stays waiting and asks for the TXT record.

interface DomainJson {
  hostname: string;
  status: string;
  reason: string | null;
  verification: { type: "TXT"; name: string; value: string };
}

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;
const DAY_MS = 86_400_000;

const later = (ms: number) => {
  const now = Date.now();
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(now + ms);
};
afterEach(() => void vi.useRealTimers());

async function createApp(client: ConsoleClient, subdomain: string): Promise<Response> {
  const repository = await publishRepository(unique("takeover"), httpdFiles("<p>app</p>"));
  return client.call("POST", "/console/api/apps", { name: "Takeover", repository, subdomain, plan: "starter" });
}

async function deployed(client: ConsoleClient, res: Response): Promise<AppJson> {
  expect(res.status).toBe(201);
  const app = (await res.json()) as AppJson;
  await client.json("POST", `/console/api/apps/${app.id}/deploy`);
  expect((await waitForDeploy(client, app.id)).status).toBe("running");
  return app;
}

const checkerOf = async (appId: string, hostname: string) => env.DOMAIN_CHECKER.get(env.DOMAIN_CHECKER.idFromName((await getDomain(env, appId, hostname))!.id));
const domainOf = async (client: ConsoleClient, appId: string, hostname: string) =>
  (await client.json<{ domains: DomainJson[] }>("GET", `/console/api/apps/${appId}/domains`)).domains.find((d) => d.hostname === hostname)!;

describe("a freed name", { timeout: 90_000 }, () => {
  it("is held for its account 30 days, and a hostname Active for it needs the TXT proof from anyone else", async () => {
    const a = await signedUpClient();
    const b = await signedUpClient();
    const subdomain = unique("freed");
    const hostname = uniqueHost("takeover");

    const first = await deployed(a, await createApp(a, subdomain));
    expect((await a.call("POST", `/console/api/apps/${first.id}/domains`, { hostname })).status).toBe(201);
    await setDns(hostname, [{ type: "CNAME", data: `${subdomain}.localhost` }]);
    const checker = await checkerOf(first.id, hostname);
    await runDurableObjectAlarm(checker);
    await runDurableObjectAlarm(checker);
    expect((await domainOf(a, first.id, hostname)).status).toBe("Active");
    expect((await a.call("DELETE", `/console/api/apps/${first.id}`)).status).toBe(200);

    // A stranger within the hold: refused, naming the field and when the name is free.
    const refused = await createApp(b, subdomain);
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { success: boolean; code: string; error: string };
    expect(body).toMatchObject({ success: false, code: "INVALID_REQUEST" });
    expect(body.error).toMatch(/^subdomain: This subdomain was released by its previous owner and is reserved for them until \d{4}-\d{2}-\d{2}\. Choose another\.$/);

    // The account that released it may use it again at once (and releases it again).
    const again = await createApp(a, subdomain);
    expect(again.status).toBe(201);
    expect((await a.call("DELETE", `/console/api/apps/${((await again.json()) as AppJson).id}`)).status).toBe(200);

    // Still held on day 29, free on day 31 (strangers signed up then: sessions do not last a month).
    later(29 * DAY_MS);
    expect((await createApp(await signedUpClient(), subdomain)).status).toBe(400);
    later(2 * DAY_MS);
    const c = await signedUpClient();
    const taken = await deployed(c, await createApp(c, subdomain));

    // A's forgotten CNAME now names the stranger's app, yet it does not prove its claim: the TXT record does.
    expect((await c.call("POST", `/console/api/apps/${taken.id}/domains`, { hostname })).status).toBe(201);
    const verified = (await (await c.call("POST", `/console/api/apps/${taken.id}/domains/${hostname}/verify`)).json()) as DomainJson;
    expect(verified.status).toBe("Error");
    expect(verified.reason).toBe(
      `${hostname} was verified for another account before, so its CNAME alone does not prove this claim: add a TXT record at _cp-challenge.${hostname} holding this domain's verification value`,
    );
    await runDurableObjectAlarm(await checkerOf(taken.id, hostname));
    expect((await domainOf(c, taken.id, hostname)).status).toBe("Error");

    await setDns(verified.verification.name, [{ type: "TXT", data: verified.verification.value }]);
    later(20_000);
    const proved = (await (await c.call("POST", `/console/api/apps/${taken.id}/domains/${hostname}/verify`)).json()) as DomainJson;
    expect(proved.status).toBe("Verifying…");
  });
});
