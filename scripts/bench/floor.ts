/**
 * The floor: a trivial Hono Worker (floor-worker/) under the same `wrangler dev` as the control
 * plane, started beside it so every request figure can be set against what the local runtime
 * costs for the least a Worker can do.
 */
import { join } from "node:path";
import { type DevServer, ROOT, startDevServer } from "../lib/dev-server";

export const FLOOR_CONFIG = join(ROOT, "scripts", "bench", "floor-worker", "wrangler.toml");

/** Starts the floor Worker on a free port (its one binding, an R2 bucket, kept under `persistTo`). */
export function startFloorWorker(persistTo: string): Promise<DevServer> {
  return startDevServer({ config: FLOOR_CONFIG, persistTo });
}
