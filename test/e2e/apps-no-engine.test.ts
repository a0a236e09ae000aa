/**
 * Without a container engine (RUNTIME_URL empty) the service still runs, and a deploy fails at
 * once saying so, with a hint (issue 12, "The engine").
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AppJson, deployAndWait, signedUp } from "./apps-harness";
import { type Worker, startWorker } from "./harness";

let worker: Worker;
beforeAll(async () => {
  worker = await startWorker({ RUNTIME_URL: "" });
});
afterAll(async () => {
  await worker?.stop();
});

it("fails a deploy at once with 'No container engine is configured.' and a hint", async () => {
  const session = await signedUp(worker.url);
  const app = await session.call<AppJson>("POST", "/console/api/apps", { name: "Nowhere", repository: "https://example.com/acme/nowhere" });
  const started = Date.now();
  const failed = await deployAndWait(session, app.id, 30_000);
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(failed).toMatchObject({ status: "failed", latest_deploy: { status: "failed", failure: { kind: "no_engine" } } });
  expect(failed.latest_deploy!.failure!.message).toMatch(/^No container engine is configured\. Set RUNTIME_URL/);
  // The service's fault, not the customer's: the first deploy is not charged.
  const wallet = await session.call<{ balance: number; entries: { kind: string }[] }>("GET", "/console/api/wallet");
  expect(wallet.balance).toBe(100_000);
  expect(wallet.entries.map((e) => e.kind)).toEqual(["credit"]);
});
