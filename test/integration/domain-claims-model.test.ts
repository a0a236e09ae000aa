import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { LOST_REASON } from "../../src/domains/claims";
import { deleteDomain, expireClaim, getDomain, insertDomainWithinLimit, markLost, routedApp, takeHostname, updateDomain } from "../../src/domains/store";
import { signedUpClient } from "./apps-helpers";
import { httpdFiles, publishRepository } from "./apps-helpers";

// Model-based test of the claims of one hostname in D1 (src/domains/store.ts, the rules of
// src/domains/claims.ts): random sequences of adds, verifications, DNS moving away, removals and
// expiries by three apps of different accounts. After each step the rows match the model: a
// pending claim locks nothing, DOMAIN_TAKEN only while another app holds the name (or this app
// claims it), at most one holder, the first verified claim wins and the others are lost (Error,
// not re-checked), and the proxy routes the name to the holder alone.

type Claim = "waiting" | "lost" | "held";
type Model = Map<number, Claim>;
interface Real {
  hostname: string;
  appIds: string[];
}

const now = () => Date.now();
const holder = (m: Model) => [...m].find(([, c]) => c === "held")?.[0];

class Add implements fc.AsyncCommand<Model, Real> {
  constructor(readonly app: number) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const outcome = await insertDomainWithinLimit(env, { id: crypto.randomUUID(), hostname: r.hostname, appId: r.appIds[this.app]!, createdAt: now(), nextCheckAt: now() + 45_000, token: crypto.randomUUID() });
    const taken = m.has(this.app) || holder(m) !== undefined;
    expect(outcome).toBe(taken ? "taken" : "inserted");
    if (!taken) m.set(this.app, "waiting");
  }
  toString = () => `add(${this.app})`;
}

/** DNS verified app `app`'s claim: it takes the name unless another app holds it. */
class Verify implements fc.AsyncCommand<Model, Real> {
  constructor(readonly app: number) {}
  check = (m: Readonly<Model>) => m.has(this.app) && m.get(this.app) !== "held";
  async run(m: Model, r: Real) {
    const row = (await getDomain(env, r.appIds[this.app]!, r.hostname))!;
    const won = await takeHostname(env, row, now());
    if (!won) await markLost(env, row.id, now(), row.waitingSince ?? now());
    expect(won).toBe(holder(m) === undefined);
    if (won) for (const [app, claim] of m) m.set(app, app === this.app ? "held" : claim === "waiting" ? "lost" : claim);
    else m.set(this.app, "lost");
  }
  toString = () => `verify(${this.app})`;
}

/** The holder's DNS no longer names it: `Error`, waiting again, re-checked. */
class DnsGone implements fc.AsyncCommand<Model, Real> {
  check = (m: Readonly<Model>) => holder(m as Model) !== undefined;
  async run(m: Model, r: Real) {
    const app = holder(m)!;
    const row = (await getDomain(env, r.appIds[app]!, r.hostname))!;
    const written = await updateDomain(env, row.id, { status: "error", reason: "gone", routeReady: false, waitingSince: now(), nextCheckAt: now() + 45_000 }, row);
    expect(written).toBe(true);
    m.set(app, "waiting");
  }
  toString = () => "dnsGone";
}

class Remove implements fc.AsyncCommand<Model, Real> {
  constructor(readonly app: number) {}
  check = (m: Readonly<Model>) => m.has(this.app);
  async run(m: Model, r: Real) {
    await deleteDomain(env, (await getDomain(env, r.appIds[this.app]!, r.hostname))!.id);
    m.delete(this.app);
  }
  toString = () => `remove(${this.app})`;
}

class Expire implements fc.AsyncCommand<Model, Real> {
  constructor(readonly app: number) {}
  check = (m: Readonly<Model>) => m.has(this.app) && m.get(this.app) !== "held";
  async run(m: Model, r: Real) {
    await expireClaim(env, (await getDomain(env, r.appIds[this.app]!, r.hostname))!, crypto.randomUUID(), now());
    m.delete(this.app);
  }
  toString = () => `expire(${this.app})`;
}

async function invariants(m: Model, r: Real) {
  let held = 0;
  for (const [app, appId] of r.appIds.entries()) {
    const row = await getDomain(env, appId, r.hostname);
    const claim = m.get(app);
    if (claim === undefined) {
      expect(row).toBeUndefined();
      continue;
    }
    if (claim === "held") {
      held++;
      expect(row?.status).toBe("verifying");
    } else if (claim === "lost") {
      expect(row).toMatchObject({ status: "error", reason: LOST_REASON, nextCheckAt: null });
    } else {
      expect(["pending_dns", "error"]).toContain(row?.status);
      expect(row?.nextCheckAt).not.toBeNull();
    }
  }
  expect(held).toBeLessThanOrEqual(1);
  const holderApp = holder(m);
  await updateRouteReady(r, holderApp);
  expect((await routedApp(env, r.hostname))?.id).toBe(holderApp === undefined ? undefined : r.appIds[holderApp]);
}

/** The holder's route is in place (as the checker does once the provider answers), so the proxy may serve it. */
async function updateRouteReady(r: Real, app: number | undefined) {
  if (app === undefined) return;
  const row = (await getDomain(env, r.appIds[app]!, r.hostname))!;
  await updateDomain(env, row.id, { routeReady: true });
}

describe("custom domain claims of one hostname (model)", { timeout: 120_000 }, () => {
  const appIds: string[] = [];
  beforeAll(async () => {
    const repository = await publishRepository(`model-${Date.now() % 100000}`, httpdFiles("<p>model</p>"));
    for (let i = 0; i < 3; i++) {
      const client = await signedUpClient();
      appIds.push((await client.json<{ id: string }>("POST", "/console/api/apps", { name: `Model ${i}`, repository, plan: "starter" })).id);
    }
  });

  it("keeps every invariant under random sequences", async () => {
    const app = fc.integer({ min: 0, max: 2 });
    const commands = [
      app.map((i) => new Add(i)),
      app.map((i) => new Verify(i)),
      fc.constant(new DnsGone()),
      app.map((i) => new Remove(i)),
      app.map((i) => new Expire(i)),
    ];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 20 }), async (cmds) => {
        const real: Real = { hostname: `model-${Date.now() % 1000000}-${++run}.example.test`, appIds };
        const model: Model = new Map();
        try {
          await fc.asyncModelRun(() => ({ model, real }), [...cmds].flatMap((cmd) => [cmd, new Check()]));
        } finally {
          for (const appId of appIds) {
            const row = await getDomain(env, appId, real.hostname);
            if (row) await deleteDomain(env, row.id);
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});

/** Runs the invariants between the commands. */
class Check implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  run = (m: Model, r: Real) => invariants(m, r);
  toString = () => "check";
}
