/** The Swarm adapter passes the runtime conformance suite on a single-node swarm. */
import { SwarmRuntime } from "../../src/runtime/swarm";
import { describeRuntimeConformance } from "../runtime/conformance";
import { startSwarm } from "./swarm-env";

describeRuntimeConformance("Docker Swarm, one node", async () => {
  const swarm = await startSwarm({ name: "cpss", nodes: 1, subnet: "10.77.1" });
  const runtime = new SwarmRuntime({ url: swarm.managerUrl, registry: swarm.registry, stopGraceSeconds: 1 });
  return { runtime, cleanup: () => swarm.down() };
});
