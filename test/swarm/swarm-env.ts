/** The throwaway swarms of these tests (scripts/lib/swarm.ts, shared with the apps benchmark). */
export { type TestSwarm, startSwarm } from "../../scripts/lib/swarm";
