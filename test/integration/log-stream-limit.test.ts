import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { apps } from "../../src/db/schema";
import { LEASE_TTL_MS, logStreamLeases } from "../../src/logs/stream-leases";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";
import type { ConsoleClient } from "./helpers";

// At most LOG_STREAMS_PER_ACCOUNT (10) live log streams per account, counted across isolates by
// one Durable Object per account: the 11th is 429 with Retry-After, another account is not
// affected, a closed stream frees its slot, and a lease nobody renews (its isolate died) lapses.

const LIMIT = 10;
let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

async function liveApp(client: ConsoleClient): Promise<AppJson> {
  const repository = await publishRepository(unique("streams"), httpdFiles("<p>streams</p>"));
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Streams", repository, subdomain: unique("streams") });
  await client.json("POST", `/console/api/apps/${app.id}/deploy`);
  expect((await waitForDeploy(client, app.id)).latest_deploy?.status).toBe("live");
  return app;
}

/** Opens the app's live stream; an open one has sent its first bytes (`retry:`). */
async function open(client: ConsoleClient, appId: string): Promise<{ res: Response; reader: ReadableStreamDefaultReader<Uint8Array> | null }> {
  const res = await client.call("GET", `/console/api/apps/${appId}/logs/stream`);
  if (res.status !== 200) return { res, reader: null };
  const reader = res.body!.getReader();
  await reader.read();
  return { res, reader };
}

const accountOf = async (appId: string) => (await database(env).select({ accountId: apps.accountId }).from(apps).where(eq(apps.id, appId)).get())!.accountId;

describe("live log streams per account", { timeout: 90_000 }, () => {
  it("the 11th open stream is 429 with Retry-After; another account still streams; closing one frees a slot", async () => {
    const client = await signedUpClient();
    const [one, two] = [await liveApp(client), await liveApp(client)];
    const streams = [];
    // Over both of the account's apps: the limit is the account's.
    for (let i = 0; i < LIMIT; i++) streams.push(await open(client, i % 2 === 0 ? one.id : two.id));
    expect(streams.map((s) => s.res.status)).toEqual(Array(LIMIT).fill(200));

    const refused = await open(client, one.id);
    expect(refused.res.status).toBe(429);
    expect(Number(refused.res.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await refused.res.json()).toEqual({
      success: false,
      code: "RATE_LIMIT_EXCEEDED",
      error: expect.stringMatching(/^This account already has 10 live log streams open, the most at once\. Close one \(another tab or window\) or try again in \d+ seconds?\.$/),
    });

    const other = await signedUpClient();
    const theirs = await open(other, (await liveApp(other)).id);
    expect(theirs.res.status).toBe(200);
    await theirs.reader!.cancel();

    await streams[0]!.reader!.cancel();
    let again = await open(client, two.id);
    for (let i = 0; i < 50 && again.res.status === 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      again = await open(client, two.id);
    }
    expect(again.res.status).toBe(200);
    for (const s of [...streams.slice(1), again]) await s.reader!.cancel();
  });

  it("a lease nobody renews (its viewer's isolate died) lapses; a renewed one holds", async () => {
    const client = await signedUpClient();
    const accountId = await accountOf((await liveApp(client)).id);
    const leases = logStreamLeases(env, accountId);
    const t0 = Date.now();
    for (let i = 0; i < LIMIT; i++) expect((await leases.acquire({ leaseId: `dead-${i}`, now: t0, limit: LIMIT })).allowed).toBe(true);
    expect(await leases.acquire({ leaseId: "late", now: t0 + 1000, limit: LIMIT })).toEqual({ allowed: false, retryAfterSeconds: 59 });
    expect(await leases.renew({ leaseId: "dead-0", now: t0 + LEASE_TTL_MS - 1000 })).toBe(true);
    // Past the TTL: nine lapsed, the renewed one holds, so nine slots are free again.
    for (let i = 0; i < LIMIT - 1; i++) expect((await leases.acquire({ leaseId: `new-${i}`, now: t0 + LEASE_TTL_MS + 1, limit: LIMIT })).allowed).toBe(true);
    expect((await leases.acquire({ leaseId: "one-too-many", now: t0 + LEASE_TTL_MS + 1, limit: LIMIT })).allowed).toBe(false);
    expect(await leases.renew({ leaseId: "dead-1", now: t0 + LEASE_TTL_MS + 1 })).toBe(false);
  });
});
