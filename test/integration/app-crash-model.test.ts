import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { appController } from "../../src/apps/app-controller";
import { RUNNER_SILENT_MS } from "../../src/apps/heartbeat";
import { APP_ID_LABEL } from "../../src/apps/launch";
import { retireRowsOf } from "../../src/apps/retire-ledger";
import { deployById, getApp, insertApp } from "../../src/apps/store";
import { insertAccount } from "../../src/auth/accounts";
import { addCredit, readWallet, walletBalance } from "../../src/billing/ledger";
import { DockerRuntime } from "../../src/runtime";
import { httpdFiles, publishRepository } from "./apps-helpers";

// Kills of the app controller (its Durable Object reset with `ctx.abort`, as a redeploy of the
// Worker or an eviction does), interleaved with controls: whatever the object held in memory is
// lost, its storage and D1 stay. After each step, once the controller's alarm has run, the fake
// engine holds nothing the records cannot explain: every instance of the app is the one its record
// names or one its retire ledger still has to drain, at most one serves besides those, no change is
// left in flight, and the wallet equals its ledger. Apps are kept from one sequence to the next
// (a new one only after a Delete), so that a sequence starts from wherever the last one left off.

const fake = new DockerRuntime({ url: env.RUNTIME_URL });

type Killable = "stop" | "start" | "restart" | "plan" | "env" | "deploy" | "delete";
type Step = { kind: Killable } | { kind: "tick" } | { kind: "kill"; during: Killable | "idle"; afterMs: number };

// Deploys go through the real queue and take a second or more each: they are the rarer steps.
const quick = fc.constantFrom<Killable>("stop", "start", "restart", "plan", "env");
const killable: fc.Arbitrary<Killable | "idle"> = fc.oneof(
  { weight: 8, arbitrary: quick },
  { weight: 1, arbitrary: fc.constantFrom<Killable>("deploy", "delete") },
  { weight: 2, arbitrary: fc.constant("idle" as const) },
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: quick.map((kind) => ({ kind })) },
  { weight: 1, arbitrary: fc.constantFrom<Killable>("deploy", "delete").map((kind) => ({ kind })) },
  { weight: 2, arbitrary: fc.constant({ kind: "tick" as const }) },
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("kill" as const), during: killable, afterMs: fc.integer({ min: 0, max: 60 }) }) },
);

let repository = "";
let n = 0;
interface World {
  appId: string;
  accountId: string;
  deleted: boolean;
}
let world: World | null = null;

const controller = () => appController(env, world!.appId);

async function newWorld(): Promise<World> {
  const accountId = crypto.randomUUID();
  await insertAccount(env, { id: accountId, email: `crash-${accountId}@example.com`, passwordHash: "x", createdAt: Date.now() });
  await addCredit(env, { id: crypto.randomUUID(), accountId, amount: 100_000, note: "model", at: Date.now() });
  const appId = crypto.randomUUID();
  await insertApp(env, { id: appId, accountId, name: "Crash", repository, branch: "main", rootDirectory: "", dockerfilePath: "Dockerfile", subdomain: `crash-${Date.now() % 1_000_000}-${++n}`, plan: "lite", createdAt: Date.now() });
  world = { appId, accountId, deleted: false };
  await control("deploy");
  await settle();
  return world;
}

/** Runs one control as the console would (real time), answering its outcome or the error that ended it. */
async function control(kind: Killable): Promise<unknown> {
  const appId = world!.appId;
  const now = Date.now();
  const c = controller();
  switch (kind) {
    case "deploy":
      return c.deploy({ appId, deployId: crypto.randomUUID(), now });
    case "plan":
      return c.changePlan({ appId, plan: (await getApp(env, appId))?.plan === "pro" ? "lite" : "pro", now });
    case "env": {
      const version = (await getApp(env, appId))?.envVersion ?? 0;
      return c.saveEnv({ appId, version, variables: [{ key: "MODEL", value: String(++n) }], now });
    }
    case "delete": {
      const result = await c.delete({ appId, now });
      if ((result as { outcome: string }).outcome === "done") world!.deleted = true;
      return result;
    }
    default:
      return c[kind]({ appId, now });
  }
}

/** The object is reset: everything it was running is lost, its storage is not. */
async function kill(): Promise<void> {
  await runInDurableObject(controller() as unknown as DurableObjectStub, (_instance: unknown, state) => state.abort("killed by the model")).catch(() => undefined);
}

/**
 * Waits for the change in flight to end, running the alarm as the platform would: at once (work
 * lost with a reset is noticed by the next alarm), and a minute later for a deploy whose job was
 * never sent (the kill came between its mark and its message).
 */
async function settle(deployKilled = false): Promise<void> {
  const started = Date.now();
  let skipped = 0;
  for (;;) {
    const current = await controller().inFlight();
    if (current === null) break;
    if (Date.now() - started > 90_000) throw new Error(`a change stayed in flight: ${JSON.stringify(current)}`);
    // A job that has not begun 10 s after the kill was never sent (the queue starts one within a
    // second or two here); the minute of silence its alarm waits for is skipped.
    const deploy = deployKilled && current.kind === "deploy" && current.deployId ? await deployById(env, current.deployId) : undefined;
    const lost = deploy && deploy.runnerAliveAt === null && Date.now() - started > 10_000;
    await controller().tick(Date.now() + (lost ? RUNNER_SILENT_MS * ++skipped : 0));
    await new Promise((r) => setTimeout(r, 50));
  }
  // The alarm after the drain: every replaced instance is due by then (DRAIN_SECONDS is 2 here).
  if (!world!.deleted) await controller().tick(Date.now() + 3_000);
}

async function run(s: Step): Promise<void> {
  if (s.kind === "tick") return controller().tick(Date.now() + 3_000);
  if (s.kind !== "kill") {
    await control(s.kind);
    return settle(false);
  }
  const during = s.during === "idle" ? null : control(s.during).catch((err: unknown) => err);
  await new Promise((r) => setTimeout(r, s.afterMs));
  await kill();
  await during;
  await settle(s.during === "deploy");
  // A Delete cut short is run to its end by the next alarm (src/apps/runner-watch.ts); one killed
  // before its mark was taken leaves the app as it was.
  world!.deleted = (await getApp(env, world!.appId)) === undefined;
}

async function check(): Promise<void> {
  const { appId, accountId } = world!;
  const wallet = await readWallet(env, accountId);
  expect(wallet.balance).toBe(wallet.entries.reduce((sum, e) => sum + e.amount, 0));
  expect(wallet.balance).toBe(await walletBalance(env, accountId));
  expect(wallet.balance).toBeGreaterThanOrEqual(0);
  expect(await controller().inFlight()).toBeNull();
  const instances = await fake.instances({ [APP_ID_LABEL]: appId });
  const rows = await retireRowsOf(env, appId);
  if (world!.deleted) {
    expect(await getApp(env, appId)).toBeUndefined();
    expect(instances).toEqual([]);
    expect(rows).toEqual([]);
    return;
  }
  // A runner taken for dead that was only slow finds itself no longer current and removes its own
  // instance: the engine converges to what the records explain.
  const engine = async () => {
    const [held, app, ledger] = await Promise.all([fake.instances({ [APP_ID_LABEL]: appId }), getApp(env, appId), retireRowsOf(env, appId)]);
    const explained = new Set([app?.instanceId, ...ledger.map((r) => r.instanceId)]);
    return { unexplained: held.filter((id) => !explained.has(id)), beyondOne: Math.max(0, held.length - 1 - ledger.length) };
  };
  await expect.poll(engine, { timeout: 15_000, interval: 250 }).toEqual({ unexplained: [], beyondOne: 0 });
}

async function sequence(steps: Step[]): Promise<void> {
  if (!world || world.deleted) await newWorld();
  for (const s of steps) {
    await run(s);
    await check();
    if (world!.deleted) await newWorld();
  }
}

const seed = env.MODEL_SEED ? Number(env.MODEL_SEED) : (Date.now() ^ (Math.random() * 0x100000000)) | 0;

describe("app controller kills, model-based", () => {
  it(`holds the engine, ledger and wallet invariants over ${env.MODEL_RUNS} sequences of controls and kills (seed ${seed})`, { timeout: 60 * 60 * 1000 }, async () => {
    repository = await publishRepository(`crash-model-${Date.now() % 100000}`, httpdFiles("<p>crash</p>"));
    const started = Date.now();
    try {
      await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 3 }), (steps) => sequence(steps)), { numRuns: Number(env.MODEL_RUNS), seed, endOnFailure: true });
    } finally {
      if (world && !world.deleted) await controller().delete({ appId: world.appId, now: Date.now() });
    }
    console.log(`crash model: ${env.MODEL_RUNS} sequences (seed ${seed}) in ${Math.round((Date.now() - started) / 1000)} s`);
  });
});
