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

/** A probe running in the background; `stop` waits for its last request and gives the slowest, ms. */
export interface HealthzProbe {
  stop: () => Promise<number>;
}

/** Sends `/healthz` 100 ms after each reply until stopped. */
export function probeHealthz(base: string): HealthzProbe {
  let running = true;
  let slowest = 0;
  const loop = (async () => {
    while (running) {
      slowest = Math.max(slowest, await healthzMs(base));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return slowest;
    },
  };
}
