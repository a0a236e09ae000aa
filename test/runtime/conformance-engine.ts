/** The runtime conformance suite's part on a one-engine adapter's container settings, host ports and networks, read back from the engine. */
import { expect } from "vitest";
import { PortTakenError } from "../../src/runtime/types";
import { CAP_DROP, MAX_RESTARTS } from "../../src/runtime/instance-settings";
import * as img from "./images";
import { type Suite, engineJson, engineStatus, freePort, waitForText } from "./conformance-suite";

export function engineTests(suite: Suite): void {
  const { tag, run, spec, start, instances, networks, engineIt } = suite;
  engineIt("the engine holds the instance's settings (docker inspect): limits, capabilities, init, log, restart, port, network", async () => {
    const network = `cp-conformance-net-${run}`;
    networks.push(network);
    const s = { ...spec(tag("web")), limits: { memoryBytes: 96 * 1024 * 1024, cpus: 0.25, pids: 64 }, network, hostPort: await freePort() };
    instances.push(s.name);
    const instance = await suite.runtime.start(s);
    expect(new URL(instance.url).port).toBe(String(s.hostPort));
    const c = await engineJson<{ HostConfig: Record<string, unknown> }>(suite.under.engineUrl!, `/containers/${instance.id}/json`);
    expect(c.HostConfig).toMatchObject({
      Memory: 96 * 1024 * 1024,
      MemorySwap: 96 * 1024 * 1024,
      NanoCpus: 250_000_000,
      PidsLimit: 64,
      SecurityOpt: ["no-new-privileges"],
      Init: true,
      LogConfig: { Type: "json-file", Config: { "max-size": "5m", "max-file": "2" } },
      RestartPolicy: { Name: "on-failure", MaximumRetryCount: MAX_RESTARTS },
      PortBindings: { [`${img.PORT}/tcp`]: [{ HostIp: "127.0.0.1", HostPort: String(s.hostPort) }] },
      NetworkMode: network,
    });
    expect([...(c.HostConfig.CapDrop as string[])].sort()).toEqual([...CAP_DROP].sort());
    expect(c.HostConfig.Privileged ?? false).toBe(false);
    expect(c.HostConfig.Binds ?? []).toEqual([]);
    expect(c.HostConfig.Devices ?? []).toEqual([]);
    expect(c.HostConfig.CapAdd ?? null).toBeNull();
    expect(await waitForText(instance.url)).toContain(img.PAGE_TEXT);
  });

  engineIt("a host port held by another instance is refused with PortTakenError, leaving nothing behind", async () => {
    const hostPort = await freePort();
    const first = await start(tag("web"));
    const a = spec(tag("web"));
    instances.push(a.name);
    const holder = await suite.runtime.start({ ...a, hostPort });
    instances.push(holder.id);
    const b = spec(tag("web"));
    instances.push(b.name);
    const refused = await suite.runtime.start({ ...b, hostPort }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PortTakenError);
    expect((refused as PortTakenError).hostPort).toBe(hostPort);
    expect(await suite.runtime.inspect(b.name)).toBeNull();
    expect(await waitForText(holder.url)).toContain(img.PAGE_TEXT);
    expect(first.url).not.toBe(holder.url);
  });

  engineIt("ensureNetwork is idempotent; removeNetwork removes it, and again is fine", async () => {
    const network = `cp-conformance-net2-${run}`;
    networks.push(network);
    await suite.runtime.ensureNetwork(network, { "cp-conformance": run });
    await suite.runtime.ensureNetwork(network, { "cp-conformance": run });
    expect((await engineStatus(suite.under.engineUrl!, `/networks/${network}`))).toBe(200);
    const s = { ...spec(tag("web")), network };
    instances.push(s.name);
    const instance = await suite.runtime.start(s);
    await suite.runtime.remove(instance.id);
    await suite.runtime.removeNetwork(network);
    expect((await engineStatus(suite.under.engineUrl!, `/networks/${network}`))).toBe(404);
    await suite.runtime.removeNetwork(network);
  });
}
