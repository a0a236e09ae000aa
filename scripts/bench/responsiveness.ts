/**
 * Whether the Worker keeps answering while it exports: a single client sending `/healthz` one
 * request after another, against the same route on the idle Worker.
 */

/** Time of one `/healthz` request, ms. */
async function healthzMs(base: string): Promise<number> {
  const started = performance.now();
  await (await fetch(`${base}/healthz`)).arrayBuffer();
  return performance.now() - started;
}

/** Median of `count` sequential `/healthz` requests, ms. */
export async function idleHealthzMs(base: string, count = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await healthzMs(base));
  return times.sort((a, b) => a - b)[Math.floor(count / 2)]!;
}

/** One probe request: when it was sent (ms after the probe began) and how long its reply took (ms). */
export interface Probe {
  at: number;
  ms: number;
}

/** A probe running in the background; `stop` waits for its last request and gives every request. */
export interface HealthzProbe {
  stop: () => Promise<Probe[]>;
}

/** Sends `/healthz` 100 ms after each reply until stopped. */
export function probeHealthz(base: string): HealthzProbe {
  const began = performance.now();
  const probes: Probe[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = performance.now() - began;
      probes.push({ at, ms: await healthzMs(base) });
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return probes;
    },
  };
}

/** The slowest reply among `probes`, ms (0 for none). */
export function slowest(probes: Probe[]): number {
  return Math.max(0, ...probes.map((p) => p.ms));
}
