/** The runtime conformance suite's part on starting, replacing, stopping and removing instances, and finding them by label. */
import { expect, it } from "vitest";
import { addressUrl } from "../../src/runtime/types";
import * as img from "./images";
import { type Suite, fetchText, waitForText, waitFor } from "./conformance-suite";

export function instanceTests(suite: Suite): void {
  const { tag, run, spec, start, instances } = suite;
  it("start gives a URL that answers with the page", async () => {
    const instance = await start(tag("web"));
    expect(instance.url).toMatch(/^http:\/\/[^/]+:\d+$/);
    expect(await waitForText(instance.url)).toContain(img.PAGE_TEXT);
    const state = await suite.runtime.inspect(instance.id);
    expect(state).toEqual({ id: instance.id, running: true, url: instance.url, address: instance.address, image: tag("web") });
  });

  it("an instance is addressed by engine, node and port, the same place as its URL", async () => {
    const instance = await start(tag("web"));
    expect(instance.address).toMatchObject({ engine: expect.stringMatching(/^(docker|swarm):\S+$/), node: expect.any(String), port: expect.any(Number) });
    expect(addressUrl(instance.address!)).toBe(instance.url);
  });

  it("replace runs the new spec at a new address (in place: under the same id); revert goes back", async () => {
    const first = await start(tag("web"), { [img.GREETING_VAR]: "first" });
    expect(await waitForText(`${first.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=first`);
    const nextSpec = spec(tag("web"), { [img.GREETING_VAR]: "second" });
    instances.push(nextSpec.name);
    const second = await suite.runtime.replace(first.id, nextSpec);
    instances.push(second.id);
    expect(second.id === first.id).toBe(suite.under.switchesInPlace === true);
    expect(second.url).not.toBe(first.url);
    expect(await waitForText(`${second.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=second`);
    expect(await suite.runtime.inspect(second.id)).toMatchObject({ running: true, url: second.url });
    await suite.runtime.revert(second.id, first.id);
    if (!suite.under.switchesInPlace) expect(await suite.runtime.inspect(second.id)).toBeNull();
    const back = await suite.runtime.inspect(first.id);
    expect(back).toMatchObject({ running: true });
    expect(await waitForText(`${back!.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=first`);
    // Reverting where nothing was switched in place leaves the previous instance as it is.
    if (!suite.under.switchesInPlace) {
      await suite.runtime.revert(first.id, first.id);
      expect(await suite.runtime.inspect(first.id)).toMatchObject({ running: true, url: back!.url });
    }
  });

  it("replace without a previous instance runs a new one; revert removes it", async () => {
    const s = spec(tag("web"), { [img.GREETING_VAR]: "fresh" });
    instances.push(s.name);
    const fresh = await suite.runtime.replace(null, s);
    instances.push(fresh.id);
    expect(await waitForText(`${fresh.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=fresh`);
    await suite.runtime.revert(fresh.id, null);
    expect(await suite.runtime.inspect(fresh.id)).toBeNull();
  });

  it("replace of a stopped instance runs the new spec", async () => {
    const first = await start(tag("web"));
    await suite.runtime.stop(first.id);
    const nextSpec = spec(tag("web"), { [img.GREETING_VAR]: "after stop" });
    instances.push(nextSpec.name);
    const again = await suite.runtime.replace(first.id, nextSpec);
    instances.push(again.id);
    expect(again.id === first.id).toBe(suite.under.switchesInPlace === true);
    expect(await waitForText(`${again.url}/cgi-bin/env`)).toContain(`${img.GREETING_VAR}=after stop`);
  });

  it("the app's variables reach the process and no PORT is set", async () => {
    const instance = await start(tag("web"), { [img.GREETING_VAR]: "hello conformance a=b" });
    const text = await waitForText(`${instance.url}/cgi-bin/env`);
    expect(text).toContain(`${img.GREETING_VAR}=hello conformance a=b`);
    expect(text).toContain("PORT=unset");
  });

  it("a process listening only on 127.0.0.1 inside does not answer at its URL", async () => {
    const instance = await start(tag("loopback"));
    await waitFor(async () => (await suite.runtime.logs(instance.id)).includes(img.STARTED_LINE), "the process to start");
    for (let attempt = 0; attempt < 3; attempt++) expect(await fetchText(instance.url)).toBeNull();
  });

  it("restart keeps the image and answers again", async () => {
    const instance = await start(tag("web"));
    await waitForText(instance.url);
    const restarted = await suite.runtime.restart(instance.id);
    expect(restarted.id).toBe(instance.id);
    expect(await waitForText(restarted.url)).toContain(img.PAGE_TEXT);
    expect((await suite.runtime.inspect(instance.id))?.image).toBe(tag("web"));
  });

  it("stop leaves it not running; stopping again is fine", async () => {
    const instance = await start(tag("web"));
    await suite.runtime.stop(instance.id);
    expect(await suite.runtime.inspect(instance.id)).toMatchObject({ running: false, url: null });
    await suite.runtime.stop(instance.id);
    expect(await suite.runtime.inspect(instance.id)).toMatchObject({ running: false, url: null });
  });

  it("remove makes it disappear; removing again is fine", async () => {
    const instance = await start(tag("web"));
    await suite.runtime.remove(instance.id);
    expect(await suite.runtime.inspect(instance.id)).toBeNull();
    await suite.runtime.remove(instance.id);
    expect(await suite.runtime.inspect("cp-conformance-no-such-instance")).toBeNull();
  });

  it("instances lists this run's instances by label, running or stopped, and nothing once removed", async () => {
    const a = await start(tag("web"));
    const b = await start(tag("web"));
    await suite.runtime.stop(b.id);
    const mine = { "cp-conformance": run };
    expect((await suite.runtime.instances(mine)).sort()).toEqual([a.id, b.id].sort());
    expect(await suite.runtime.instances({ "cp-conformance": `${run}-other` })).toEqual([]);
    await suite.runtime.remove(a.id);
    await suite.runtime.remove(b.id);
    expect(await suite.runtime.instances(mine)).toEqual([]);
  });

  it("listInstances finds this run's instances by label key and value; listNetworks and listImages by prefix", async () => {
    const instance = await start(tag("web"));
    const listed = await suite.runtime.listInstances({ key: "cp-conformance", value: run });
    expect(listed).toEqual([expect.objectContaining({ id: instance.id, labels: expect.objectContaining({ "cp-conformance": run }), createdAt: expect.any(Number) })]);
    expect((await suite.runtime.listInstances({ key: "cp-conformance" })).map((i) => i.id)).toContain(instance.id);
    expect(await suite.runtime.listInstances({ key: "cp-conformance", value: `${run}-other` })).toEqual([]);
    expect((await suite.runtime.listImages(`cp-conformance-web-${run}`)).map((i) => i.name)).toEqual([tag("web")]);
    expect(await suite.runtime.listNetworks(`cp-conformance-none-${run}`)).toEqual([]);
  });
}
