import { createExecutionContext, createMessageBatch, getQueueResult, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { appController } from "../../src/apps/app-controller";
import { handleDeployBatch } from "../../src/apps/deploy-job";
import { database } from "../../src/db/client";
import { deploys } from "../../src/db/schema";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Issue 12: "Deploy jobs run on a queue ... with the job's steps recorded so a crashed job is
// retried or marked failed, never left Deploying… forever."

let n = 0;
async function deployingApp(buildSeconds: number) {
  const client = await signedUpClient();
  const repository = await publishRepository(`recovery-${Date.now() % 100000}-${++n}`, httpdFiles("<p>v1</p>", { buildSeconds }));
  const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Recovery", repository });
  const { deploy } = await client.json<{ deploy: { id: string } }>("POST", `/console/api/apps/${app.id}/deploy`);
  return { client, app, deployId: deploy.id };
}

describe("deploy recovery", () => {
  it("a deploy whose every try crashed (dead-letter queue) is failed, and the app can deploy again", async () => {
    const { client, app, deployId } = await deployingApp(3);
    const batch = createMessageBatch("deploy-jobs-dlq", [{ id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body: { appId: app.id, deployId } }]);
    const ctx = createExecutionContext();
    await handleDeployBatch(batch, env, { now: Date.now });
    await getQueueResult(batch, ctx);
    const after = await client.json<AppJson>("GET", `/console/api/apps/${app.id}`);
    expect(after).toMatchObject({ status: "failed", deploy_in_progress: false, latest_deploy: { status: "failed", failure: { kind: "interrupted" } } });

    // The job that was still building finds itself no longer current: it does not switch traffic.
    await new Promise((r) => setTimeout(r, 4000));
    const row = await database(env).select().from(deploys).where(eq(deploys.id, deployId)).get();
    expect(row?.status).toBe("failed");
    expect((await client.json<AppJson>("GET", `/console/api/apps/${app.id}`)).status).toBe("failed");

    const res = await client.call("POST", `/console/api/apps/${app.id}/deploy`);
    expect(res.status).toBe(202);
    expect(((await res.json()) as { deploy: { id: string } }).deploy.id).not.toBe(deployId);
    await waitForDeploy(client, app.id);
  }, 30_000);

  it("the controller's alarm fails a deploy that never reported back by its deadline", async () => {
    const { client, app, deployId } = await deployingApp(2);
    const stub = appController(env, app.id);
    // As if the deploy had started long ago and its job had been lost.
    await runInDurableObject(stub as unknown as DurableObjectStub, (_instance: unknown, state) => {
      state.storage.kv.put("in_flight", { kind: "deploy", deployId, since: 0 });
    });
    expect(await runDurableObjectAlarm(stub as unknown as DurableObjectStub)).toBe(true);
    const after = await client.json<AppJson>("GET", `/console/api/apps/${app.id}`);
    expect(after.latest_deploy).toMatchObject({ id: deployId, status: "failed", failure: { kind: "interrupted" } });
    expect(after.deploy_in_progress).toBe(false);
    await new Promise((r) => setTimeout(r, 3000));
  }, 30_000);
});
