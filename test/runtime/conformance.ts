/**
 * The conformance suite every runtime adapter passes (src/runtime/types.ts: one Docker Engine,
 * Docker Swarm, the fake engine the Worker tests use), after cloudflare/workers-oauth-provider's
 * storage adapter suite: one shared test body, registered once per adapter. It builds tiny images
 * FROM scratch around /bin/busybox, so it runs in Node only, and removes every instance and image
 * it makes (tags `cp-conformance-*`, label `cp-conformance`). Its parts are in conformance-*.ts.
 */
import { readFile } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_RESTARTS } from "../../src/runtime/instance-settings";
import type { ContainerRuntime } from "../../src/runtime/types";
import { engineTests } from "./conformance-engine";
import { imageTests } from "./conformance-images";
import { instanceTests } from "./conformance-instances";
import { logTests } from "./conformance-logs";
import { processTests } from "./conformance-process";
import type { RuntimeUnderTest, Suite } from "./conformance-suite";
import * as img from "./images";
import { tarStream } from "./tar";

export type { RuntimeUnderTest } from "./conformance-suite";

/** Where Debian's busybox-static puts the binary the test images are made of. */
const BUSYBOX = "/bin/busybox";

/** Registers the suite under `describe(name)`; `setup` runs once before it. */
export function describeRuntimeConformance(name: string, setup: () => Promise<RuntimeUnderTest>, options: { engineSettings?: boolean } = {}): void {
  describe(`ContainerRuntime conformance: ${name}`, () => {
    const suite = newSuite(options.engineSettings !== false);

    beforeAll(async () => {
      suite.busybox = await readFile(BUSYBOX).catch(() => {
        throw new Error(`${BUSYBOX} is missing: install Debian's busybox-static (the test images are built from it).`);
      });
      suite.under = await setup();
      suite.runtime = suite.under.runtime;
      for (const role of ["web", "loopback"] as const) {
        const outcome = await suite.build(role);
        if (!outcome.ok) throw new Error(`Building the ${role} test image failed: ${outcome.error}`);
      }
    });

    afterEach(async () => {
      for (const id of suite.instances.splice(0)) await suite.runtime.remove(id);
      for (const network of suite.networks.splice(0)) await suite.runtime.removeNetwork(network);
    });

    afterAll(async () => {
      if (suite.runtime) for (const image of suite.images) await suite.runtime.removeImage(image);
      await suite.under?.cleanup?.();
    });

    it("ping reports the engine's API version", async () => {
      const { apiVersion } = await suite.runtime.ping();
      expect(apiVersion).toMatch(/^\d+\.\d+$/);
    });

    imageTests(suite);
    instanceTests(suite);
    logTests(suite);
    processTests(suite);
    engineTests(suite);
  });
}

/** This registration's names and helpers; `runtime`, `under` and `busybox` are set in its `beforeAll`. */
function newSuite(engineSettings: boolean): Suite {
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  let count = 0;
  const suite: Suite = {
    run,
    tag: (role) => `cp-conformance-${role}-${run}:1`,
    runtime: undefined as unknown as ContainerRuntime,
    under: undefined as unknown as RuntimeUnderTest,
    busybox: new Uint8Array(0),
    instances: [],
    images: [],
    networks: [],
    build: async (role, output) => {
      const image = suite.tag(role);
      suite.images.push(image);
      return suite.runtime.build({
        context: tarStream(img.conformanceContext(suite.busybox), 16 * 1024),
        dockerfile: img.DOCKERFILES[role],
        tag: image,
        onOutput: (text) => void output?.push(text),
      });
    },
    spec: (image, env = {}) => ({
      image,
      name: `cp-conformance-${run}-${++count}`,
      labels: { "cp-conformance": run, app_id: `conformance-${run}` },
      env,
      port: img.PORT,
      limits: { memoryBytes: 64 * 1024 * 1024, cpus: 0.5 },
    }),
    start: async (image, env) => {
      const s = suite.spec(image, env);
      const started = suite.runtime.start(s);
      // Track by name too: a start that fails half-way may leave the instance behind.
      suite.instances.push(s.name);
      const instance = await started;
      suite.instances.push(instance.id);
      return instance;
    },
    restartPolicy: () => suite.under.restartPolicy ?? { maxRestarts: MAX_RESTARTS, giveUpMs: 30_000 },
    engineIt: it.skipIf(!engineSettings),
  };
  return suite;
}
