/**
 * Ports owned by the control plane, in workerd with the real D1 and the fake Docker Engine at its
 * HTTP boundary: allocation before start, the unique (engine, port) index under concurrent
 * allocations, a refused port skipped, a crashed instance keeping its port, and Delete freeing the
 * app's ports and removing its network.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { appNetworkName, DockerRuntime, InstanceExitedError, runtimeFor } from "../../src/runtime";
import { allocatePort, engineKey, freeInstancePorts, heldPorts, withPortTable } from "../../src/runtime/ports";
import { DOCKERFILES, PORT, conformanceContext } from "../runtime/images";
import { tarStream } from "../runtime/tar";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

const db = () => database(env);
/** A key of its own per test, so tests never see each other's rows. */
const engine = (name: string) => `test-${name}-${crypto.randomUUID().slice(0, 8)}`;

async function image(runtime: DockerRuntime, role: keyof typeof DOCKERFILES): Promise<string> {
  const tag = `cp-conformance-ports-${role}-${Date.now()}:1`;
  const outcome = await runtime.build({ context: tarStream(conformanceContext(new TextEncoder().encode("stand-in busybox"))), dockerfile: DOCKERFILES[role], tag });
  expect(outcome.ok).toBe(true);
  return tag;
}

const spec = (img: string, name: string) => ({ image: img, name, labels: { "control-plane.app_id": "app-ports" }, env: {}, port: PORT, limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 } });

describe("instance ports in D1", () => {
  it("concurrent allocations on one engine never share a port", async () => {
    const key = engine("race");
    const range = { first: 40000, last: 40009 };
    const ports = await Promise.all(Array.from({ length: 10 }, (_, i) => allocatePort(db(), { engine: key, range, appId: `a${i}`, instanceName: `n${i}`, now: 1 })));
    const given = ports.filter((p): p is number => p !== null);
    expect(new Set(given).size).toBe(given.length);
    expect((await heldPorts(db(), key)).map((r) => r.port).sort()).toEqual([...given].sort());
    // The same port on another engine is another port.
    expect(await allocatePort(db(), { engine: engine("other"), range, appId: "b", instanceName: "m", now: 1 })).toBe(40000);
  });

  it("start allocates before it starts, skips a port the engine refuses, and remove frees only after removal", async () => {
    const plain = new DockerRuntime({ url: env.RUNTIME_URL });
    const web = await image(plain, "web");
    const key = engine("refused");
    const outside = await plain.start({ ...spec(web, `outside-${Date.now()}`), hostPort: 0 });
    const taken = Number(new URL(outside.url).port);
    const ported = withPortTable(plain, db(), { engine: key, range: { first: taken, last: taken + 1 } });
    try {
      const instance = await ported.start(spec(web, `ported-${Date.now()}`));
      expect(new URL(instance.url).port).toBe(String(taken + 1));
      expect(await heldPorts(db(), key)).toEqual([{ port: taken + 1, appId: "app-ports", instanceId: instance.id, instanceName: expect.any(String) }]);
      // Stop and restart keep the port, and so its URL.
      await ported.stop(instance.id);
      expect((await ported.restart(instance.id)).url).toBe(instance.url);
      expect(await heldPorts(db(), key)).toHaveLength(1);
      await ported.remove(instance.id);
      expect(await heldPorts(db(), key)).toEqual([]);
    } finally {
      await plain.remove(outside.id);
      await plain.removeImage(web);
    }
  });

  it("replace allocates the next generation's port beside the previous one's; revert frees it and keeps the previous", async () => {
    const plain = new DockerRuntime({ url: env.RUNTIME_URL });
    const web = await image(plain, "web");
    const key = engine("replace");
    const ported = withPortTable(plain, db(), { engine: key, range: { first: 42000, last: 42099 } });
    const first = await ported.start(spec(web, `first-${Date.now()}`));
    try {
      const next = await ported.replace(first.id, spec(web, `next-${Date.now()}`));
      expect(next.id).not.toBe(first.id);
      expect((await heldPorts(db(), key)).map((r) => r.instanceId).sort()).toEqual([first.id, next.id].sort());
      await ported.revert(next.id, first.id);
      expect(await plain.inspect(next.id)).toBeNull();
      expect(await heldPorts(db(), key)).toEqual([expect.objectContaining({ instanceId: first.id })]);
      await ported.revert(first.id, first.id);
      expect(await plain.inspect(first.id)).toMatchObject({ running: true, url: first.url });
    } finally {
      await ported.remove(first.id);
      await plain.removeImage(web);
    }
  });

  it("an instance whose process exited keeps its port until it is removed; no other instance gets it", async () => {
    const plain = new DockerRuntime({ url: env.RUNTIME_URL });
    const [exiting, web] = [await image(plain, "exiting"), await image(plain, "web")];
    const key = engine("crashed");
    const ported = withPortTable(plain, db(), { engine: key, range: { first: 41000, last: 41099 } });
    const crashed = await ported.start(spec(exiting, `crashed-${Date.now()}`)).catch((error: unknown) => error);
    expect(crashed).toBeInstanceOf(InstanceExitedError);
    const crashedId = (crashed as InstanceExitedError).instanceId;
    const held = await heldPorts(db(), key);
    expect(held).toEqual([expect.objectContaining({ instanceId: crashedId })]);
    const other = await ported.start(spec(web, `other-${Date.now()}`));
    try {
      expect(Number(new URL(other.url).port)).not.toBe(held[0]!.port);
      expect((await ported.state(crashedId))?.status).toBe("exited");
      expect((await heldPorts(db(), key)).map((r) => r.port)).toContain(held[0]!.port);
    } finally {
      await ported.remove(crashedId);
      await ported.remove(other.id);
      await plain.removeImage(exiting);
      await plain.removeImage(web);
    }
    expect(await heldPorts(db(), key)).toEqual([]);
    await freeInstancePorts(db(), key, "no-such-instance");
  });

  it("an app's instance runs on its own network and a held port; Delete frees the port and removes the network", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(`ports-${Date.now() % 100000}`, httpdFiles("<p>ports</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Ports", repository });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    expect((await waitForDeploy(client, app.id)).status).toBe("running");
    expect((await client.json<{ instance: unknown }>("GET", `/console/api/apps/${app.id}`)).instance).toEqual({ state: "running", restarts: 0, exit_code: null, oom_killed: false });
    const key = engineKey(env.RUNTIME_URL);
    const mine = (await heldPorts(db(), key)).filter((r) => r.appId === app.id);
    expect(mine).toHaveLength(1);
    const version = (await fetch(`${env.RUNTIME_URL}/_ping`)).headers.get("Api-Version");
    const inspect = (await (await fetch(`${env.RUNTIME_URL}/v${version}/containers/${mine[0]!.instanceId}/json`)).json()) as { HostConfig: { NetworkMode: string; PortBindings: Record<string, { HostPort: string }[]> } };
    expect(inspect.HostConfig.NetworkMode).toBe(appNetworkName(app.id));
    expect(Object.values(inspect.HostConfig.PortBindings)[0]?.[0]?.HostPort).toBe(String(mine[0]!.port));
    expect(runtimeFor(env)).not.toBeNull();

    expect((await client.call("DELETE", `/console/api/apps/${app.id}`)).status).toBe(200);
    expect((await heldPorts(db(), key)).filter((r) => r.appId === app.id)).toEqual([]);
    const network = await fetch(`${env.RUNTIME_URL}/v${version}/networks/${appNetworkName(app.id)}`);
    await network.body?.cancel();
    expect(network.status).toBe(404);
  }, 30_000);
});
