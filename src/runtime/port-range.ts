/** The one rule for choosing a host port of the instance range (INSTANCE_PORT_RANGE), pure. */
import type { PortRange } from "./specs";

/**
 * The port to take: the first one after `after` that is neither held nor excluded, wrapping
 * around the range; null when every port is taken. `after` null (or outside the range) starts
 * at the range's first port. One engine passes the last port it allocated, so a just-freed port
 * stays unused for as long as possible (ports.ts); Swarm passes a random point, so two control
 * planes picking at once rarely collide (swarm-rules.ts, `swarmPort`).
 */
export function pickPort(range: PortRange, held: ReadonlySet<number>, after: number | null, exclude: ReadonlySet<number> = new Set()): number | null {
  const size = range.last - range.first + 1;
  const start = after === null || after < range.first || after >= range.last ? range.first : after + 1;
  for (let i = 0; i < size; i++) {
    const port = range.first + ((start - range.first + i) % size);
    if (!held.has(port) && !exclude.has(port)) return port;
  }
  return null;
}
