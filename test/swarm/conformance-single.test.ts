/**
 * The Swarm adapter passes the runtime conformance suite on a single-node swarm whose registry
 * wants credentials: the adapter signs in with X-Registry-Auth, and without them a push is refused.
 */
import { readFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { SwarmRuntime } from "../../src/runtime/swarm";
import { RuntimeUnavailableError } from "../../src/runtime/types";
import { describeRuntimeConformance } from "../runtime/conformance";
import * as img from "../runtime/images";
import { tarStream } from "../runtime/tar";
import { type TestSwarm, startSwarm } from "./swarm-env";

const registryAuth = { username: "cp", password: `pw-${Math.random().toString(36).slice(2)}` };
let pending: Promise<TestSwarm> | undefined;
const swarm = () => (pending ??= startSwarm({ name: "cpss", nodes: 1, subnet: "10.77.1", registryAuth }));

afterAll(async () => {
  if (pending) await (await pending).down();
});

describeRuntimeConformance("Docker Swarm, one node", async () => {
  const s = await swarm();
  return { runtime: new SwarmRuntime({ url: s.managerUrl, registry: s.registry, registryAuth, stopGraceSeconds: 1 }) };
});

describe("Docker Swarm, one node: registry credentials", () => {
  it("a push without credentials, or with wrong ones, is refused by the registry", async () => {
    const s = await swarm();
    for (const auth of [undefined, { username: "cp", password: "wrong-password" }]) {
      const runtime = new SwarmRuntime({ url: s.managerUrl, registry: s.registry, ...(auth ? { registryAuth: auth } : {}) });
      const tag = `cp-conformance-noauth-${Date.now().toString(36)}:1`;
      try {
        const built = runtime.build({ context: tarStream(img.conformanceContext(await readFile("/bin/busybox"))), dockerfile: img.DOCKERFILES.web, tag });
        await expect(built).rejects.toThrow(RuntimeUnavailableError);
        await expect(built).rejects.toThrow(/Pushing the image to the registry failed: .*(no basic auth credentials|unauthorized)/);
      } finally {
        await runtime.removeImage(tag);
      }
    }
  });
});
