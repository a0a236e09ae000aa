/** The fake Docker engine passes the same conformance suite as the real one (in Node). */
import { DockerRuntime } from "../../src/runtime/docker";
import { startFakeDocker } from "../fakes/fake-docker";
import { describeRuntimeConformance } from "../runtime/conformance";

describeRuntimeConformance("fake Docker engine", async () => {
  const fake = await startFakeDocker();
  return { runtime: new DockerRuntime({ url: fake.url }), engineUrl: fake.url, cleanup: () => fake.close() };
});
