import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { startApp } from "../../src/apps/app-changes";
import { appController } from "../../src/apps/app-controller";
import { getApp } from "../../src/apps/store";
import { DockerRuntime } from "../../src/runtime";
import type { ContainerRuntime, InstanceSpec } from "../../src/runtime/types";
import { type AppJson, httpdFiles, publishRepository, signedUpClient, waitForDeploy } from "./apps-helpers";

// Every new instance comes through the one relaunch (src/apps/relaunch.ts), which takes the launch
// options from the configuration: Start, like Deploy, gives an engine that checks health itself the
// configured HEALTH_CHECK_INTERVAL_SECONDS, not a fixed 30 s.

let n = 0;
const unique = (base: string) => `${base}-${Date.now() % 100000}-${++n}`;

/** The fake engine's adapter, recording the spec of every instance it is asked to run. */
function recordingRuntime() {
  const base = new DockerRuntime({ url: env.RUNTIME_URL });
  const specs: InstanceSpec[] = [];
  const runtime = new Proxy(base, {
    get(target, property) {
      const value = Reflect.get(target, property) as unknown;
      if (typeof value !== "function") return value;
      if (property !== "start" && property !== "replace") return value.bind(target);
      return (...args: unknown[]) => {
        specs.push(args.at(-1) as InstanceSpec);
        return value.apply(target, args);
      };
    },
  }) as ContainerRuntime;
  return { runtime, specs };
}

describe("relaunch takes the launch options from the configuration", () => {
  it("Start runs the new instance with the configured health check interval", async () => {
    const client = await signedUpClient();
    const repository = await publishRepository(unique("repo"), httpdFiles("<p>x</p>"));
    const app = await client.json<AppJson>("POST", "/console/api/apps", { name: "Web", repository, subdomain: unique("interval") });
    await client.json("PATCH", `/console/api/apps/${app.id}`, { health_check: { path: "/", expect: "2xx-3xx" } });
    await client.json("POST", `/console/api/apps/${app.id}/deploy`);
    await waitForDeploy(client, app.id);
    await client.json("POST", `/console/api/apps/${app.id}/stop`);
    const stopped = (await getApp(env, app.id))!;
    expect(stopped.status).toBe("stopped");

    const { runtime, specs } = recordingRuntime();
    const configured = { ...env, HEALTH_CHECK_INTERVAL_SECONDS: "7" } as Env;
    const result = await startApp({ env: configured, runtime, reschedule: async () => undefined }, stopped, Date.now());
    expect(result).toEqual({ outcome: "done" });
    expect(specs.map((spec) => spec.healthCheck?.intervalSeconds)).toEqual([7]);
    expect((await getApp(env, app.id))!.status).toBe("running");
    await appController(env, app.id).delete({ appId: app.id, now: Date.now() });
  });
});
